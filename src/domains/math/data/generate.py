#!/usr/bin/env python3
"""lucid's math problems: a deterministic JSONL generator on top of mathematics_dataset==1.0.1.

`lucid models fetch math` runs it with PYTHONPATH set to the pinned wheels it unpacked
(mathematics-dataset 1.0.1, sympy 1.4, mpmath 1.3.0, numpy 1.23.5, absl-py 2.5.1, six 1.17.0):
  python3 generate.py --seed 0 --per-module 30 \
      --difficulty train-easy,train-medium,train-hard --out problems.jsonl
and checks the sha256 of what it wrote against the one committed in src/domains/math/data/mod.rs.

Each output line: {"id", "module", "difficulty", "question", "answer"}.

Determinism:
  * PYTHONHASHSEED is forced to a fixed value (default 0) by re-executing the
    interpreter, because the package does `random.choice(list(some_set_of_str))`
    (util/composition.py Context.pop, used for variable names), so str-hash
    randomisation would otherwise change the output between runs.
  * `random` and `numpy.random` (the only RNGs the package uses, both global)
    are re-seeded before every (difficulty, module) pair, from
    sha256("{seed}|{difficulty}|{module}"), so a module's problems do not depend
    on which other modules are selected or on their order.
  * composition.expand_entities is patched to drop an id()-hash-ordered set
    (see _patch_expand_entities); without it *_composed / polynomials__add
    questions list their "Let ..." sentences in a run-dependent order.
  * Rejection of over-long questions/answers mirrors the package's
    generate.sample_from_module (MAX_QUESTION_LENGTH=160, MAX_ANSWER_LENGTH=30).
"""

import argparse
import hashlib
import json
import os
import sys
import time

HASHSEED = '0'
PINNED_SYMPY = '1.4'   # numpy 1.23.5 pinned too; 1.26.4 gave identical output

# A default selection: 30 train modules from all 8 areas (see REPORT.md).
DEFAULT_MODULES = [
    'algebra__linear_1d',
    'algebra__linear_1d_composed',
    'algebra__linear_2d',
    'algebra__polynomial_roots',
    'algebra__sequence_next_term',
    'algebra__sequence_nth_term',
    'arithmetic__add_or_sub',
    'arithmetic__add_sub_multiple',
    'arithmetic__div',
    'arithmetic__mixed',
    'arithmetic__mul',
    'arithmetic__mul_div_multiple',
    'arithmetic__nearest_integer_root',
    'calculus__differentiate',
    'comparison__closest',
    'comparison__kth_biggest',
    'comparison__pair',
    'comparison__sort',
    'measurement__conversion',
    'measurement__time',
    'numbers__base_conversion',
    'numbers__div_remainder',
    'numbers__gcd',
    'numbers__is_factor',
    'numbers__is_prime',
    'numbers__lcm',
    'numbers__list_prime_factors',
    'numbers__place_value',
    'numbers__round_number',
    'polynomials__add',
    'polynomials__collect',
    'polynomials__evaluate',
    'polynomials__expand',
    'probability__swr_p_level_set',
    'probability__swr_p_sequence',
]

DIFFICULTIES = ('train-easy', 'train-medium', 'train-hard', 'train',
                'interpolate', 'extrapolate')


def _reexec_with_fixed_hashseed(no_fix):
  if no_fix or os.environ.get('PYTHONHASHSEED') == HASHSEED:
    return
  env = dict(os.environ)
  env['PYTHONHASHSEED'] = HASHSEED
  os.execve(sys.executable, [sys.executable] + sys.argv, env)


def _compat_shims(np):
  """No-ops on the pinned stack (numpy 1.23.5, sympy 1.4).

  Only for trying newer deps: numpy>=1.24 removed np.object (used by
  sample/polynomials.py); sympy>=1.6 moved base_solution_linear into
  sympy.solvers.diophantine.diophantine. numpy>=2 cannot be shimmed
  (ndarray.itemset removed).
  """
  if 'object' not in np.__dict__:
    np.object = object
  import importlib
  import sympy.solvers.diophantine  # noqa: F401
  dio = sys.modules['sympy.solvers.diophantine']
  if not hasattr(dio, 'base_solution_linear'):
    inner = importlib.import_module('sympy.solvers.diophantine.diophantine')
    dio.base_solution_linear = inner.base_solution_linear


def _make_entropy_fn(level, num_levels):
  # Same as mathematics_dataset.generate._make_entropy_fn.
  lower = level / num_levels
  upper = (level + 1) / num_levels

  def modify_entropy(range_):
    assert len(range_) == 2
    length = range_[1] - range_[0]
    return (range_[0] + lower * length, range_[0] + upper * length)
  return modify_entropy


def _flatten(tree, prefix=None, out=None):
  out = {} if out is None else out
  for key, value in tree.items():
    name = prefix + '__' + key if prefix is not None else key
    if isinstance(value, dict):
      _flatten(value, name, out)
    else:
      out[name] = value
  return out


def build_modules(difficulty):
  """Returns {module_name: callable} for a difficulty, as the package does."""
  from mathematics_dataset.modules import modules
  if difficulty == 'train-easy':
    tree = modules.train(_make_entropy_fn(0, 3))
  elif difficulty == 'train-medium':
    tree = modules.train(_make_entropy_fn(1, 3))
  elif difficulty == 'train-hard':
    tree = modules.train(_make_entropy_fn(2, 3))
  elif difficulty == 'train':
    tree = modules.train(_make_entropy_fn(0, 1))
  elif difficulty == 'interpolate':
    tree = modules.test()
  elif difficulty == 'extrapolate':
    tree = modules.test_extra()
  else:
    raise ValueError(difficulty)
  return _flatten(tree)


def _patch_expand_entities():
  """Makes composition.expand_entities deterministic.

  Upstream does `entities = set(context.child_entities)` (+ kwargs entities),
  then `list(entities)` and `random.shuffle`. `Entity` has the default
  id()-based hash, so the pre-shuffle order (and hence the order of the
  "Let ... / Suppose ..." sentences in *_composed and polynomials__add
  questions) depends on memory addresses. Here the set is replaced by
  first-seen order; RNG consumption (one shuffle of the same length) and the
  text of every sentence are unchanged, only their order becomes reproducible.
  """
  import random
  import six
  from mathematics_dataset.util import composition

  def expand_entities(context, **kwargs):
    kwargs = kwargs.copy()
    entities = list(dict.fromkeys(context.child_entities))
    for key, maybe_entity in six.iteritems(kwargs):
      if isinstance(maybe_entity, composition.Entity):
        if maybe_entity not in entities:
          entities.append(maybe_entity)
        kwargs[key] = maybe_entity.handle
    random.shuffle(entities)
    child_descriptions = []
    for entity in entities:
      child_descriptions.append(entity.child_description)
      if not entity.expression_used:
        child_descriptions.append(entity.description)
    child_description = ' '.join([s for s in child_descriptions if s])
    return child_description, kwargs

  composition.expand_entities = expand_entities


def _seed_for(seed, difficulty, module):
  digest = hashlib.sha256(
      '{}|{}|{}'.format(seed, difficulty, module).encode()).digest()
  return int.from_bytes(digest[:4], 'big')  # < 2**32, valid for numpy


def sample_problem(fn, max_q, max_a):
  """Mirror of mathematics_dataset.generate.sample_from_module (no absl)."""
  dropped = 0
  while True:
    problem = fn()
    question = str(problem.question)
    if len(question) > max_q:
      dropped += 1
      continue
    answer = str(problem.answer)
    if len(answer) > max_a:
      dropped += 1
      continue
    return question, answer, dropped


def main():
  p = argparse.ArgumentParser(description=__doc__,
                              formatter_class=argparse.RawTextHelpFormatter)
  p.add_argument('--seed', type=int, default=0)
  p.add_argument('--per-module', type=int, default=40)
  p.add_argument('--difficulty', default='train-medium',
                 help='comma list of: ' + ', '.join(DIFFICULTIES))
  p.add_argument('--modules', default='default',
                 help="comma list of module names, 'default', or 'all'")
  p.add_argument('--out', default='-', help="output .jsonl ('-' = stdout)")
  p.add_argument('--stats', default=None,
                 help='optional JSON file with per-module time / drop counts')
  p.add_argument('--list', action='store_true',
                 help='print the available module names and exit')
  p.add_argument('--no-hashseed-fix', action='store_true',
                 help='do NOT force PYTHONHASHSEED (for testing the leak)')
  p.add_argument('--allow-unpinned', action='store_true',
                 help='run even if sympy != 1.4 (output will differ)')
  p.add_argument('--no-entity-order-fix', action='store_true',
                 help='do NOT patch composition.expand_entities (testing)')
  args = p.parse_args()

  _reexec_with_fixed_hashseed(args.no_hashseed_fix)

  import random
  import warnings
  warnings.simplefilter('ignore', DeprecationWarning)  # np.object, randrange
  import numpy as np
  import sympy
  _compat_shims(np)
  from mathematics_dataset import generate_settings as gs
  print('python {} numpy {} sympy {} hashseed {}'.format(
      sys.version.split()[0], np.__version__, sympy.__version__,
      os.environ.get('PYTHONHASHSEED')), file=sys.stderr)
  if sympy.__version__ != PINNED_SYMPY and not args.allow_unpinned:
    sys.exit('sympy {} found, pinned {} expected (output depends on the sympy '
             'version; run it through `lucid models fetch math`, or pass --allow-unpinned)'
             .format(sympy.__version__, PINNED_SYMPY))
  if not args.no_entity_order_fix:
    _patch_expand_entities()

  difficulties = [d.strip() for d in args.difficulty.split(',') if d.strip()]
  for d in difficulties:
    if d not in DIFFICULTIES:
      p.error('unknown difficulty {!r}'.format(d))

  if args.list:
    for d in difficulties:
      for name in sorted(build_modules(d)):
        print('{}\t{}'.format(d, name))
    return

  out = sys.stdout if args.out == '-' else open(args.out, 'w', newline='\n')
  stats = []
  total = 0
  for difficulty in difficulties:
    available = build_modules(difficulty)
    if args.modules == 'all':
      names = sorted(available)
    elif args.modules == 'default':
      names = [n for n in DEFAULT_MODULES if n in available]
    else:
      names = [n.strip() for n in args.modules.split(',') if n.strip()]
      missing = [n for n in names if n not in available]
      if missing:
        p.error('not in {}: {}'.format(difficulty, ', '.join(missing)))
    for name in names:
      s = _seed_for(args.seed, difficulty, name)
      random.seed(s)
      np.random.seed(s)
      fn = available[name]
      t0 = time.perf_counter()
      dropped = 0
      for i in range(args.per_module):
        q, a, d = sample_problem(fn, gs.MAX_QUESTION_LENGTH,
                                 gs.MAX_ANSWER_LENGTH)
        dropped += d
        rec = {
            'id': 's{}-{}-{}-{:04d}'.format(args.seed, difficulty, name, i),
            'module': name,
            'difficulty': difficulty,
            'question': q,
            'answer': a,
        }
        out.write(json.dumps(rec, ensure_ascii=True) + '\n')
        total += 1
      dt = time.perf_counter() - t0
      stats.append({'difficulty': difficulty, 'module': name,
                    'n': args.per_module, 'seconds': round(dt, 3),
                    'dropped': dropped})
      print('{:13s} {:42s} {:7.2f}s dropped={}'.format(
          difficulty, name, dt, dropped), file=sys.stderr)
  if out is not sys.stdout:
    out.close()
  print('total problems: {}'.format(total), file=sys.stderr)
  if args.stats:
    with open(args.stats, 'w') as f:
      json.dump(stats, f, indent=1)


if __name__ == '__main__':
  main()
