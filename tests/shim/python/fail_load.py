# SPDX-License-Identifier: Apache-2.0
# A failing CUDA call from Python through tests/shim/python/kimgext.c:
#   fail_load.py PATH held|released|busy
# busy: another thread keeps running Python (and taking the GIL) meanwhile.
import sys
import threading
import kimgext


def step(path, release):
    return kimgext.load(path, release)  # line 11: the report's innermost frame


def main():
    mode = sys.argv[2]
    stop = threading.Event()
    if mode == "busy":
        def spin():
            x = 0
            while not stop.is_set():
                x += 1
        threading.Thread(target=spin, daemon=True).start()
    r = step(sys.argv[1], mode != "held")
    stop.set()
    print("load:", r)


main()
