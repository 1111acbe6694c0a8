"""Offline fusion and gate experiments over a features file (`OTC_SEARCH_FEATURES=FILE
bench/search/run.sh …` with MODEL): both rankers' candidates per request part, before any gate.
Replays what `SearchIndex::find` does (fusion.rs: lexical hits admitted by the relevance gate,
the semantic ranker's own bars, reciprocal-rank fusion, parts interleaved) so a change to a
weight, a bar or a rule can be measured on every set in seconds, not one rebuild each. With the
shipped values it prints exactly the figures search_eval prints.

Usage: fusion.py FEATURES [--half odd|even] [--set key=value ...] [--semantic-alone]
  keys: cos lead floor (the bars), w (semantic weight), span, veto (0|1: unknown product vetoes
  the semantic ranker), ungated (0|1: fuse the lexical ranker's candidates before its gate)"""
import json, sys

SHIPPED = dict(cos=0.5, lead=0.1, floor=0.25, w=0.5, span=0.2, veto=1, ungated=0, k=60.0)
MARGIN = 0.05  # fusion.rs SURE_MARGIN


def part_list(seg, c):
    gated, sem = seg['gated'], seg['semantic']
    unknown = seg['unknown_product'] and c['veto']
    best = sem[0][1] if sem else 0.0
    lead = best - (sem[1][1] if len(sem) > 1 else 0.0)
    sure = bool(sem) and (best >= c['cos'] or (best >= c['floor'] and lead >= c['lead'])) and not unknown
    if not gated and not sure:
        return []
    scores = {}
    for r, (t, _) in enumerate((seg['ungated'] if c['ungated'] else gated)[:50]):
        scores[t] = scores.get(t, 0) + 1 / (c['k'] + r + 1)
    for r, (t, cos) in enumerate(sem[:50]):
        if r > 0 and cos < best - c['span']:
            break
        if not gated and r > 0 and cos < c['cos'] and cos < best - MARGIN:
            break
        scores[t] = scores.get(t, 0) + c['w'] / (c['k'] + r + 1)
    return sorted(scores, key=lambda t: (-scores[t]))


def answer(q, c, limit=5):
    segs = q['segments']
    parts = segs[:-1] if len(segs) > 1 else segs  # the last is the whole request
    lists = [part_list(s, c) for s in parts]
    out, seen = [], set()
    for r in range(max((len(x) for x in lists), default=0)):
        for lst in lists:
            if len(out) < limit and r < len(lst) and lst[r] not in seen:
                seen.add(lst[r])
                out.append(lst[r])
    return out


def evaluate(qs, c, semantic_alone=False):
    match = [q for q in qs if q['kind'] == 'match']
    none = [q for q in qs if q['kind'] == 'none']
    h1 = h5 = empty = multi = covered = 0
    for q in match:
        a = [t for t, _ in q['segments'][-1]['semantic'][:5]] if semantic_alone else answer(q, c)
        e = set(q['expect'])
        empty += not a
        h1 += bool(a) and a[0] in e
        h5 += bool(e & set(a))
        if len(q.get('parts') or []) > 1:
            multi += 1
            covered += all(set(p) & set(a) for p in q['parts'])
    none_empty = sum(1 for q in none if not answer(q, c))
    return (f"hit@1 {h1}/{len(match)} ({100 * h1 / len(match):.1f} %), hit@5 {h5}/{len(match)} "
            f"({100 * h5 / len(match):.1f} %), none empty {none_empty}/{len(none)}, answerable empty "
            f"{empty}/{len(match)}, multi-part covered {covered}/{multi}")


if __name__ == '__main__':
    args = sys.argv[1:]
    qs = [json.loads(line) for line in open(args.pop(0))]
    c = dict(SHIPPED)
    alone = False
    while args:
        a = args.pop(0)
        if a == '--half':
            parity = {'even': 0, 'odd': 1}[args.pop(0)]
            qs = [q for i, q in enumerate(qs) if i % 2 == parity]
        elif a == '--set':
            key, value = args.pop(0).split('=')
            c[key] = float(value)
        elif a == '--semantic-alone':
            alone = True
    print(evaluate(qs, c, alone))
