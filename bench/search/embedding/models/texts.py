"""Tool texts for the embedding model from `search_eval --dump` (id, op, description[:300],
parameter names, full description). Usage: texts.py TOOLS_TSV RECIPE > TEXTS
recipes: name_desc   "toolkit words: tool words. description"      (camelCase split)
         name_desc_params  name_desc + " Parameters: a b c" (names split)
         raw_desc    "Toolkit.Tool. description"                  (no splitting)"""
import re, sys
def words(s):
    s = re.sub(r'[_\-]+', ' ', s)
    s = re.sub(r'(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])', ' ', s)
    return re.sub(r'\s+', ' ', s).strip().lower()
tsv, recipe = sys.argv[1:3]
for l in open(tsv, encoding='utf-8'):
    p = l.rstrip('\n').split('\t')
    tid, op, d300, params, full = (p + [''] * 5)[:5]
    tk, tool = tid.split('.', 1)
    desc = re.sub(r'\s+', ' ', full or d300).strip()[:600]
    if recipe == 'raw_desc':
        t = f'{tid}. {desc}'
    else:
        t = f'{words(tk)}: {words(tool)}. {desc}'
        if recipe == 'name_desc_params' and params:
            t += ' Parameters: ' + ', '.join(words(x) for x in params.split(',')[:12]) + '.'
    print(t.replace('\n', ' '))
