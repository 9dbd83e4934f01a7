# SPDX-License-Identifier: Apache-2.0
# A few JAX operations on the GPU: kimg must print nothing.
import jax
import jax.numpy as jnp

assert jax.devices()[0].platform == "gpu", jax.devices()
x = jnp.ones((512, 512))
y = jax.jit(lambda a: jnp.tanh(a @ a).sum())(x)
print("jax ok", float(y))
