"""Fuses the bridge's ranking (search_eval --ranks) with the embedding ranking and prints hit
rates on the whole set and on each half, for reciprocal-rank fusion and for a linear mix.
Usage: fuse.py TOOLS_TSV OUT_DIR BM25_JSONL QUERIES_JSON  (needs numpy)"""
import json, sys
import numpy as np

tools_tsv, out_dir, bm25_jsonl, queries_json = sys.argv[1:5]
ids = [l.split('\t')[0] for l in open(tools_tsv)]
pos = {t: i for i, t in enumerate(ids)}
D = np.array(json.load(open(f'{out_dir}/docs-64.json')), dtype=np.float32)
Q = np.array(json.load(open(f'{out_dir}/queries.json')), dtype=np.float32)
qs = json.load(open(queries_json))['queries']
bm = [json.loads(l) for l in open(bm25_jsonl)]
C = Q @ D.T


def score(rank_of, sel=None):
    h1 = h5 = ne = 0
    for qi, (q, b) in enumerate(zip(qs, bm)):
        if sel is not None and qi % 2 != sel:
            continue
        r = rank_of(qi, q, b)
        if q['kind'] == 'none':
            ne += not r
        else:
            h1 += bool(r) and r[0] in q['expect']
            h5 += any(x in q['expect'] for x in r[:5])
    return h1, h5, ne


def rrf(k, we, tau):
    def rank_of(qi, q, b):
        c = C[qi]
        hits = [t for t, _ in b['hits']]
        order = np.argsort(-c)[:50]
        if not hits and c[order[0]] < tau:
            return []
        res = {}
        for r, t in enumerate(hits):
            res[t] = res.get(t, 0) + 1 / (k + r)
        for r, i in enumerate(order):
            if not hits and c[i] < tau:
                break
            res[ids[i]] = res.get(ids[i], 0) + we / (k + r)
        return sorted(res, key=lambda t: (-res[t], t))[:10]
    return rank_of


def linear(beta):
    def rank_of(qi, q, b):
        if not b['hits']:
            return []
        top = b['hits'][0][1]
        res = {t: s / top + beta * C[qi][pos[t]] for t, s in b['hits']}
        return sorted(res, key=lambda t: (-res[t], t))[:10]
    return rank_of


print('method              all (hit@1, hit@5, none empty)   odd half   even half')
print('bridge alone       ', score(linear(0)), score(linear(0), 0), score(linear(0), 1))
for k in (1, 10, 60):
    for we in (0.5, 1.0):
        for tau in (0.5, 0.6):
            f = rrf(k, we, tau)
            print(f'rrf k={k:<2} w={we} t={tau}', score(f), score(f, 0), score(f, 1))
for beta in (0.5, 1, 2, 4):
    f = linear(beta)
    print(f'linear beta={beta:<4}  ', score(f), score(f, 0), score(f, 1))
