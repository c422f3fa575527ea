#!/usr/bin/env python3
"""Sorts the matrix cases that differ into causes, for tests/windsor_matrix_pending.txt.

    WINDSOR_MATRIX_REPORT=1 cargo test --test windsor_matrix 2>&1 | tests/windsor-oracle/pending_reasons.py [--rest]

Prints `<case> | <reasons>` for every case the report shows as differing; --rest prints instead
the differences no rule explains (each needs a rule, or a reason written by hand).
"""
import collections
import os
import re
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
matrix = {c['name']: c for c in yaml.safe_load(open(os.path.join(HERE, 'matrix.yaml')))['cases']}
blocks = {}; cur = None
for l in sys.stdin:
    if l.startswith('DIFFERS '): cur = l.split()[1]; blocks[cur] = []
    elif cur and l.startswith('  '): blocks[cur].append(l.strip())
RULES = [
 ('mirrors', lambda l: 'mirrors: |-' in l, 'Talos patch text: the deferred registry-mirrors expression is written as `mirrors: |-` (a string once resolved), Windsor writes it on a line of its own (a map)'),
 ('quoted', lambda l: re.search(r'ours "\s*- \\"[0-9.]+\\""', l), 'Talos patch text: addresses quoted (`- "1.1.1.1"`) where Windsor writes them plain'),
 ('domain', lambda l: re.search(r'windsor "(https://grafana\.)?test"', l) or 'external_domain":"test' in l, 'dns.domain: the CLI sets `test` when a workstation runtime is set and dns.domain is not (runtime.go ResolveConfig); this crate leaves it unset (domain_name absent, external_domain windsor.local, grafana_base_url https://grafana.)'),
 ('tfoff', lambda l: "cannot call nil" in l, 'terraform.enabled: false: the CLI registers no terraform_output() and fails at core\'s first call (cannot call nil); this crate defers the call and renders'),
 ('health', lambda l: 'healthCheckExprs' in l, 'healthCheckExprs: Windsor v0.9.0\'s Kustomization type has no such field and drops it; this crate keeps it'),
]
out = {}
unclassified = collections.defaultdict(list)
for name, lines in blocks.items():
    ctx = matrix[name]['context']
    reasons = []
    rest = []
    for l in lines:
        hit = False
        for key, f, text in RULES:
            if f(l):
                if text not in reasons: reasons.append(text)
                hit = True
        if not hit: rest.append(l)
    if rest and (ctx == 'test' or ctx.startswith('test-')):
        reasons.append('a context named test or test-* composes without the schema defaults in the CLI (config/resolve.go, as windsor test does); this crate applies them')
        rest = []
    if rest and (ctx == 'local' or ctx.startswith('local-')):
        reasons.append('context defaults not derived: the CLI applies dev-mode defaults to a context named local (dev: true, which core\'s option-dev facet turns into pki, private dns, database and observability; workstation runtime docker; platform docker; dns.domain test) before reading values.yaml (so also when the values say dev: false); this crate takes only the values')
        rest = []
    out[name] = (reasons, rest)
for name, (reasons, rest) in out.items():
    for l in rest: unclassified[name].append(l)
if '--rest' in sys.argv:
    for n, ls in unclassified.items():
        print('==', n, matrix[n]['context'], matrix[n].get('testCase', ''))
        for l in ls[:8]: print('   ', l[:300])
else:
    for n, (reasons, rest) in out.items():
        print(n, '|', '; '.join(reasons) if reasons else '?')
