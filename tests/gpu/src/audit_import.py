# SPDX-License-Identifier: Apache-2.0
# Imports the PyTorch extension that tests/gpu/src/torch_ext.py built (for an
# arch list without this GPU), without running any of its kernels: under
# KIMG_AUDIT=1 KIMG_ON_ERROR=exit:N the process must end inside the import.
import importlib.machinery
import importlib.util
import os
import sys

import torch  # noqa: F401  (the extension needs libtorch loaded)

path = os.path.join(sys.argv[1], "kimg_wrong_arch_ext.so")
loader = importlib.machinery.ExtensionFileLoader("kimg_wrong_arch_ext", path)
spec = importlib.util.spec_from_file_location("kimg_wrong_arch_ext", path, loader=loader)
mod = importlib.util.module_from_spec(spec)
loader.exec_module(mod)
print("imported", flush=True)
