"""Quality of an embedding ranking alone and fused with the bridge's lexical ranking, on the
even and odd halves of the dev set; every parameter tuned on one half, reported on the other.
Usage: eval.py TOOLS_TSV BM25_JSONL QUERIES_JSON DOCS_F32 QUERIES_F32 [DIM]"""
import json, sys, itertools
import numpy as np

tools_tsv, bm25_jsonl, queries_json, docs_f32, q_f32 = sys.argv[1:6]
dim = int(sys.argv[6]) if len(sys.argv) > 6 else 384
ids = [l.split('\t')[0] for l in open(tools_tsv, encoding='utf-8')]
pos = {t: i for i, t in enumerate(ids)}
D = np.fromfile(docs_f32, dtype='<f4').reshape(-1, dim)
Q = np.fromfile(q_f32, dtype='<f4').reshape(-1, dim)
qs = json.load(open(queries_json))['queries']
bm = [json.loads(l) for l in open(bm25_jsonl)]
assert len(D) == len(ids) and len(Q) == len(qs) == len(bm)
C = Q @ D.T
TOP = np.argsort(-C, axis=1)[:, :50]
HALF = {'even': [i for i in range(len(qs)) if i % 2 == 0], 'odd': [i for i in range(len(qs)) if i % 2 == 1]}


def score(rank_of, idx):
    h1 = h5 = ne = nm = nn = me = 0
    for qi in idx:
        q = qs[qi]
        r = rank_of(qi)
        if q['kind'] == 'none':
            nn += 1; ne += not r
        else:
            nm += 1
            me += not r
            h1 += bool(r) and r[0] in q['expect']
            h5 += any(x in q['expect'] for x in r[:5])
    return dict(h1=h1 / nm, h5=h5 / nm, none_empty=ne / nn, match_empty=me / nm, nm=nm, nn=nn)


def lexical(qi):
    return [t for t, _ in bm[qi]['hits']][:10]


def emb(qi):
    return [ids[i] for i in TOP[qi][:10]]


def empty_rule(qi, tau, lex_min):
    """nothing fits: no confident lexical candidate AND top cosine below tau"""
    h = bm[qi]['hits']
    lex_conf = bool(h) and h[0][1] >= lex_min
    return (not lex_conf) and C[qi, TOP[qi][0]] < tau


def rrf(k, we, tau=None, lex_min=0.0, depth=50):
    def rank_of(qi):
        if tau is not None and empty_rule(qi, tau, lex_min):
            return []
        res = {}
        for r, (t, _) in enumerate(bm[qi]['hits'][:depth]):
            res[t] = res.get(t, 0) + 1 / (k + r + 1)
        for r, i in enumerate(TOP[qi][:depth]):
            res[ids[i]] = res.get(ids[i], 0) + we / (k + r + 1)
        return sorted(res, key=lambda t: (-res[t], t))[:10]
    return rank_of


def linear(beta, tau=None, lex_min=0.0):
    """cosine + beta * lexical score / the query's top lexical score, over the union of both
    candidate lists (a tool missing from the lexical list has lexical 0)"""
    def rank_of(qi):
        if tau is not None and empty_rule(qi, tau, lex_min):
            return []
        h = bm[qi]['hits']
        top = h[0][1] if h else 1.0
        lex = {t: s / top for t, s in h}
        cand = set(lex) | {ids[i] for i in TOP[qi][:50]}
        res = {t: float(C[qi, pos[t]]) + beta * lex.get(t, 0.0) for t in cand}
        return sorted(res, key=lambda t: (-res[t], t))[:10]
    return rank_of


def objective(m):
    # rank quality first; none handling counts; answerable-empty is penalised hard
    return m['h1'] + m['h5'] + m['none_empty'] - 3 * max(0, m['match_empty'] - 0.02)


def fmt(m):
    return f"{100*m['h1']:5.1f} {100*m['h5']:5.1f} {100*m['none_empty']:5.1f} {100*m['match_empty']:4.1f}"


print('columns per half: hit@1 hit@5 none-empty answerable-empty (%)')
print(f"{'method':44s} {'even':24s} {'odd':24s}")
for name, f in [('lexical (bridge) alone', lexical), ('embedding alone (no none rule)', emb)]:
    print(f"{name:44s} {fmt(score(f, HALF['even']))}   {fmt(score(f, HALF['odd']))}")
for k in (5, 10, 20, 60):
    for we in (0.5, 1.0, 2.0):
        f = rrf(k, we, tau=-1)  # lexical gate only: empty iff lexical empty and tau=-1 never... see below
        f = rrf(k, we)
        print(f"{'rrf k=%d we=%.1f (no none rule)' % (k, we):44s} {fmt(score(f, HALF['even']))}   {fmt(score(f, HALF['odd']))}")
for beta in (0.1, 0.2, 0.3, 0.5, 1.0):
    f = linear(beta)
    print(f"{'linear beta=%.1f (no none rule)' % beta:44s} {fmt(score(f, HALF['even']))}   {fmt(score(f, HALF['odd']))}")

# tuned on one half, reported on the other
taus = [x / 100 for x in range(20, 95, 2)]
lexmins = [0.0, 1e9] + sorted({round(s, 2) for b in bm for _, s in b['hits'][:1]})[::3]
grid = []
for k, we in itertools.product((5, 10, 20, 60), (0.5, 1.0, 2.0)):
    grid.append((f'rrf k={k} we={we}', lambda tau, lm, k=k, we=we: rrf(k, we, tau, lm)))
for beta in (0.1, 0.2, 0.3, 0.5, 1.0):
    grid.append((f'linear beta={beta}', lambda tau, lm, beta=beta: linear(beta, tau, lm)))
print('\ntuned (fusion, tau = top-cosine threshold, lex_min = lexical top score for a confident lexical candidate; 1e9 = ignore lexical) on one half, reported on the other')
for tune, test in (('even', 'odd'), ('odd', 'even')):
    best = None
    for name, mk in grid:
        # tau/lex_min tuned jointly with the fusion
        for tau in taus:
            for lm in (0.0, 1e9):
                m = score(mk(tau, lm), HALF[tune])
                o = objective(m)
                if best is None or o > best[0]:
                    best = (o, name, tau, lm, m)
    o, name, tau, lm, m = best
    mt = score(dict(grid)[name](tau, lm), HALF[test])
    print(f"tuned on {tune}: {name} tau={tau} lex_min={lm:g}  | tune half {fmt(m)} | held-out {test} {fmt(mt)}")
# fixed popular choice, none rule tuned per half
for name, mk in [('rrf k=60 we=1.0', lambda t, l: rrf(60, 1.0, t, l)), ('rrf k=10 we=1.0', lambda t, l: rrf(10, 1.0, t, l))]:
    for tune, test in (('even', 'odd'), ('odd', 'even')):
        best = max(((objective(score(mk(t, 0.0), HALF[tune])), t) for t in taus))
        print(f"{name} tau tuned on {tune}={best[1]}: held-out {test} {fmt(score(mk(best[1], 0.0), HALF[test]))}")
