"""Synthetic templates for jinja_oracle.py: each exercises one construct,
filter, test or method of the Jinja2 subset chat templates use, over the
variables of oracle_contexts.Contexts.synthetic (x y: any value; s t: str;
n m: int; f: float; b: bool; xs: scalars; ns: ints; ws: words; ds: records
with name/age/role/tag/score; d: dict; messages, tools, documents)."""

PRINTING = [
    "{{ x }}|{{ y }}",
    "{{ xs }}",
    "{{ ds }}",
    "{{ d }}",
    "{{ f }} {{ -f }} {{ f * 3 }} {{ f / 7 }}",
    "{{ (1, 'a', none) }} {{ (1,) }} {{ () }} {{ [] }} {{ {} }}",
    "{{ none }} {{ true }} {{ false }} {{ None }} {{ True }}",
    "{{ 'a\\tb\\n' ~ \"it's\" }} {{ ['it\\'s', \"q\\\"\", '\\x01', '\\u00e9'] }}",
    "{{ [s, t] }} {{ {'k': s} }}",
    "{{ 1e3 }} {{ 1_000 }} {{ 0x1F }} {{ 0o17 }} {{ 0b101 }} {{ 2.5e-3 }}",
    "{{ messages }}",
    "{{ tools }}",
    "{{ undefined_thing }}[{{ undefined_thing }}]",
]

ARITHMETIC = [
    "{{ n + m }} {{ n - m }} {{ n * m }} {{ n // (m or 1) }} {{ n % (m or 1) }}",
    "{{ n / (m or 1) }} {{ n ** 2 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }}",
    "{{ f // 1.5 }} {{ f % 1.5 }} {{ f ** 2 }} {{ -n }} {{ +n }}",
    "{{ 7 // -2 }} {{ -7 // 2 }} {{ 7 % -3 }} {{ -7 % 3 }} {{ 7.5 % -2 }}",
    "{{ n + f }} {{ n * f }} {{ b + n }} {{ true + true }}",
    "{{ s * 2 }} {{ 3 * t }} {{ xs + ws }} {{ ws * 2 }}",
    "{{ x + y }}",
    "{{ s + n }}",
    "{{ n / 0 }}",
    "{{ '%s and %d' % (s, n) }} {{ '%05.1f|%x|%r' % (f, n if n > 0 else 5, s) }}",
    "{{ '%(a)s-%(b)s' % {'a': s, 'b': n} }} {{ '%-6s|%6s|' % (t, t) }}",
    "{{ '{} {}'.format(s, n) }} {{ '{0}:{name}'.format(n, name=t) }} {{ '{:>8}|{:.3f}'.format(t, f) }}",
    "{{ x ~ y ~ n ~ f }}",
]

COMPARISON = [
    "{{ n < m }} {{ n <= m }} {{ n > m }} {{ n >= m }} {{ n == m }} {{ n != m }}",
    "{{ 1 < n < 100 }} {{ s == t }} {{ s < t }} {{ xs == xs }} {{ [1, 2] < [1, 3] }}",
    "{{ x == y }} {{ x != y }} {{ 1 == 1.0 }} {{ true == 1 }} {{ none == none }}",
    "{{ x < y }}",
    "{{ t in s }} {{ t not in s }} {{ n in ns }} {{ 'name' in d }} {{ 'a' in ws }}",
    "{{ n in s }}",
    "{{ undefined_thing == none }} {{ undefined_thing in ws }} {{ s in undefined_thing }}",
]

LOGIC = [
    "{{ x and y }}|{{ x or y }}|{{ not x }}|{{ x and not y or n }}",
    "{{ s or 'empty' }} {{ xs or 'none' }} {{ d and d.a }} {{ 0 or none or '' }}",
    "{{ 'yes' if b else 'no' }} {{ 'pos' if n > 0 else 'neg' if n < 0 else 'zero' }}",
    "[{{ 'only' if b }}]",
    "{% if x %}X{% elif y %}Y{% else %}N{% endif %}",
    "{% if n > 5 and s %}a{% elif n > 0 or not s %}b{% endif %}",
    "{% if not (b and x) %}1{% endif %}{% if undefined_thing %}2{% else %}3{% endif %}",
]

LOOPS = [
    "{% for w in ws %}{{ loop.index }}/{{ loop.length }}:{{ w }}{% if not loop.last %},{% endif %}{% endfor %}",
    "{% for w in ws %}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.revindex }}{{ loop.revindex0 }};{% endfor %}",
    "{% for w in ws %}{{ loop.previtem }}>{{ loop.nextitem }}|{% endfor %}",
    "{% for w in ws %}{{ loop.cycle('a', 'b', 'c') }}{% endfor %}",
    "{% for n in ns if n > 0 %}{{ n }}/{{ loop.length }} {% else %}none{% endfor %}",
    "{% for n in ns %}{% if n < 0 %}{% continue %}{% endif %}{% if n > 500 %}{% break %}{% endif %}{{ n }} {% endfor %}",
    "{% for k in d %}{{ k }}={{ d[k] }};{% endfor %}",
    "{% for k, v in d.items() %}{{ k }}:{{ v }} {% endfor %}",
    "{% for k, v in d|items %}{{ k }}:{{ v }} {% endfor %}",
    "{% for c in s %}[{{ c }}]{% endfor %}",
    "{% for a in ns %}{% for b in ws %}{{ loop.index }}{{ a }}{{ b }} {% endfor %}{{ loop.index }}|{% endfor %}",
    "{% for x in ws %}{% set y = x ~ '!' %}{{ y }}{% endfor %}{{ y }}",
    "{% for i in range(n if n < 20 else 3) %}{{ i }}{% endfor %}|{% for i in range(2, 9, 3) %}{{ i }}{% endfor %}|{{ range(5)|list }}",
    "{% for a, b in [(1, 2), (3, 4)] %}{{ a + b }}{% endfor %}{% for a, b in ds %}{% endfor %}",
    "{% for m in messages %}{{ m.role }}{% if m.content is defined %}:{{ m.content|length }}{% endif %} {% endfor %}",
    "{% for x in n %}{% endfor %}",
    "{% for x in none %}{% endfor %}",
    "{% for x in undefined_thing %}a{% else %}empty{% endfor %}",
    "{% for r in ds if r.tag is defined %}{{ r.name }}{{ loop.index }}{% endfor %}",
    "{% set ns1 = namespace(c=0) %}{% for w in ws if ns1.c < 2 %}{% set ns1.c = ns1.c + 1 %}{{ w }}{% endfor %}{{ ns1.c }}",
]

ASSIGNMENT = [
    "{% set a = n %}{% set a = a + 1 %}{{ a }}{% set p, q = 1, 2 %}{{ p }}{{ q }}",
    "{% set ns1 = namespace(total=0, items=[]) %}{% for n in ns %}{% set ns1.total = ns1.total + n %}{% set ns1.items = ns1.items + [n] %}{% endfor %}{{ ns1.total }} {{ ns1.items }}",
    "{% set ns1 = namespace(d) %}{{ ns1.a }}|{{ ns1.name }}",
    "{% set block %}  {{ s }} {% endset %}[{{ block }}]",
    "{% set block | upper %}{{ s }}-{{ n }}{% endset %}{{ block }}",
    "{% filter upper %}{{ s }} and {{ t }}{% endfilter %}",
    "{% filter trim | title %}  {{ s }}  {% endfilter %}",
    "{% with a = n, b = s %}{{ a }}{{ b }}{% endwith %}{{ a }}",
    "{% generation %}{{ s }}{% set z = 1 %}{% endgeneration %}{{ z }}",
    "{% if b %}{% set v = 'set in if' %}{% endif %}{{ v }}",
    "{% set x.y = 1 %}",
    "{% set d2 = {'a': n, 'b': [s, t], 3: none} %}{{ d2 }} {{ d2.a }} {{ d2['b'][1] }} {{ d2[3] }}",
    "{% set l = [n, s] + ws %}{{ l[0] }} {{ l[-1] }} {{ l|length }}",
]

MACROS = [
    "{% macro greet(name, greeting='Hello') %}{{ greeting }}, {{ name }}!{% endmacro %}{{ greet(s) }} {{ greet(t, greeting='Hi') }} {{ greet() }}",
    "{% macro m(a, b=a ~ '!') %}[{{ a }}|{{ b }}]{% endmacro %}{{ m(n) }}{{ m(n, 2) }}{{ m(b=3, a=4) }}",
    "{% macro v() %}{{ varargs }}{{ kwargs }}{% endmacro %}{{ v(1, s, k=n) }}",
    "{% macro v(a) %}{{ a }}{% endmacro %}{{ v(1, 2) }}",
    "{% macro v(a) %}{{ a }}{% endmacro %}{{ v(a=1, z=2) }}",
    "{% macro fact(k) %}{% if k <= 1 %}1{% else %}{{ k * fact(k - 1)|int }}{% endif %}{% endmacro %}{{ fact(m if m > 0 else 3) }}",
    "{% macro outer() %}{{ s }}-{{ later }}{% endmacro %}{% set later = 'L' %}{{ outer() }}",
    "{% macro f(x) %}  {{ x }}  {% endmacro %}[{{ f(n) }}]{{ f(n)|trim }}{{ f(n)|length }}",
    "{% macro loop_it(items) %}{% for i in items %}{{ i }}{% if not loop.last %}+{% endif %}{% endfor %}{% endmacro %}{{ loop_it(ns) }}={{ ns|sum }}",
    "{% macro r(k) %}{{ r(k) }}{% endmacro %}{{ r(1) }}",
    "{% macro show(m) %}{{ m.role|upper }}:{{ m.content|default('?') }}{% endmacro %}{% for m in messages %}{{ show(m) }} {% endfor %}",
]

STRING_FILTERS = [
    "{{ s|upper }}|{{ s|lower }}|{{ s|capitalize }}|{{ s|title }}",
    "[{{ s|trim }}]|[{{ s|trim('. ') }}]|{{ s|length }}|{{ s|count }}",
    "{{ s|replace(' ', '_') }}|{{ s|replace('o', '0', 1) }}|{{ s|replace('', '-') }}",
    "{{ s|reverse|list }}|{{ s|first }}|{{ s|last }}|{{ s|list }}",
    "{{ s|indent }}|{{ s|indent(2, true) }}|{{ s|indent('> ', first=true, blank=true) }}",
    "{{ s|center(30) }}|{{ s|truncate(10) }}|{{ s|truncate(12, true, '..', 0) }}|{{ s|wordcount }}",
    "{{ s|e }}|{{ '<a href=\"x\">&\\'</a>'|escape }}|{{ s|safe }}|{{ s|string }}",
    "{{ n|string }}|{{ f|string }}|{{ xs|string }}|{{ none|string }}",
    "{{ '%s-%s'|format(s, n) }}|{{ s|format }}",
    "{{ t|int }}|{{ t|float }}|{{ '0x1A'|int(0, 16) }}|{{ ' 12 '|int }}|{{ '3.9'|int }}|{{ 'x'|int(7) }}|{{ f|int }}|{{ n|float }}",
    "{{ s|attr('upper') is defined }}|{{ d|attr('a') }}",
    "{{ x|tojson }}|{{ y|tojson(indent=2) }}",
    "{{ ds|tojson(indent=4, sort_keys=true) }}{{ d|tojson(separators=(',', ':')) }}",
    "{{ tools|tojson }}{{ documents|tojson(ensure_ascii=true) }}",
    "{{ s|tojson }}{{ '\\u2028 \\x7f \\u00e9'|tojson }}{{ f|tojson }}",
    "{{ undefined_thing|tojson }}",
    "{{ undefined_thing|default('dflt') }}|{{ none|default('dflt') }}|{{ ''|default('dflt', true) }}|{{ s|d('x', boolean=true) }}",
    "{{ undefined_thing|upper }}|{{ undefined_thing|length }}|{{ undefined_thing|trim }}",
]

SEQUENCE_FILTERS = [
    "{{ ns|sort }}|{{ ns|sort(reverse=true) }}|{{ ws|sort }}|{{ ws|sort(case_sensitive=true) }}",
    "{{ ds|sort(attribute='age')|map(attribute='name')|join(',') }}|{{ ds|sort(attribute='role,age')|map(attribute='age')|list }}",
    "{{ ns|first }}|{{ ns|last }}|{{ ns|min }}|{{ ns|max }}|{{ ns|sum }}|{{ ns|length }}",
    "{{ ws|min }}|{{ ws|max }}|{{ ws|unique|list }}|{{ ws|unique(case_sensitive=true)|list }}",
    "{{ ns|join }}|{{ ns|join(', ') }}|{{ ds|join(' / ', attribute='name') }}",
    "{{ ns|reverse|list }}|{{ ws|reverse|join }}|{{ xs|list }}",
    "{{ ns|map('abs')|list }}|{{ ws|map('upper')|join(',') }}|{{ ns|map('string')|join }}",
    "{{ ds|map(attribute='tag', default='-')|list }}|{{ ds|map(attribute='tag')|list }}",
    "{{ ds|selectattr('tag')|map(attribute='name')|list }}|{{ ds|rejectattr('tag')|list|length }}",
    "{{ ds|selectattr('role', 'equalto', 'user')|list|length }}|{{ ds|rejectattr('age', 'gt', 30)|map(attribute='age')|list }}",
    "{{ ds|selectattr('tag', 'defined')|list|length }}|{{ ds|selectattr('tag', 'undefined')|list|length }}",
    "{{ ns|select('odd')|list }}|{{ ns|reject('even')|list }}|{{ ns|select('divisibleby', 3)|list }}|{{ ns|select|list }}",
    "{{ xs|select('none')|list|length }}|{{ xs|select('string')|list }}|{{ xs|reject('number')|list }}",
    "{{ messages|selectattr('role', 'equalto', 'user')|list|length }}|{{ messages|map(attribute='role')|unique|list }}",
    "{{ d|items|list }}|{{ d|dictsort }}|{{ d|dictsort(reverse=true) }}|{{ d|list }}",
    "{{ ns|sum(start=10) }}|{{ ds|sum(attribute='age') }}|{{ ds|min(attribute='age') }}",
    "{{ ds|selectattr('age', 'ge', 18)|first }}|{{ (ns|select('gt', 5)|list)[:2] }}",
    "{{ ns|select('>', 2)|list }} {{ ns|select('in', [1, 2, 3])|list }}",
    "{{ ws|map('length')|max }}",
    "{% set g = ns|select('odd') %}{{ g|list }}{{ g|list }}",
    "{{ xs|sort }}",
    "{{ f|round }}|{{ f|round(2) }}|{{ f|round(1, 'floor') }}|{{ f|round(0, 'ceil') }}|{{ n|round }}|{{ 2.5|round }}|{{ 0.125|round(2) }}",
    "{{ n|abs }}|{{ f|abs }}|{{ -3|abs }}",
]

TESTS = [
    "{{ x is defined }}{{ x is undefined }}{{ x is none }}{{ x is string }}{{ x is number }}{{ x is integer }}{{ x is float }}",
    "{{ x is boolean }}{{ x is true }}{{ x is false }}{{ x is mapping }}{{ x is sequence }}{{ x is iterable }}{{ x is callable }}",
    "{{ n is even }}{{ n is odd }}{{ n is divisibleby 3 }}{{ n is divisibleby(5) }}{{ n is not even }}",
    "{{ s is lower }}{{ s is upper }}{{ t is in ws }}{{ n is eq 3 }}{{ n is ne 3 }}{{ n is lt 3 }}{{ n is le 3 }}{{ n is gt 3 }}{{ n is ge 3 }}",
    "{{ n is equalto n }}{{ n is greaterthan 1 }}{{ n is lessthan 1 }}{{ n is sameas n }}{{ none is sameas none }}",
    "{{ 'upper' is filter }}{{ 'nope' is filter }}{{ 'odd' is test }}{{ range is callable }}",
    "{{ f is even }}",
    "{{ s is even }}",
    "{{ undefined_thing is even }}",
    "{{ messages[0] is mapping }}{{ messages is sequence }}{{ s is sequence }}{{ d is iterable }}{{ n is iterable }}",
]

METHODS = [
    "[{{ s.strip() }}][{{ s.lstrip() }}][{{ s.rstrip() }}][{{ s.strip('. ') }}][{{ s.rstrip('o') }}]",
    "{{ s.split() }}{{ s.split(' ') }}{{ s.split(' ', 1) }}{{ s.rsplit(' ', 1) }}{{ s.splitlines() }}",
    "{{ s.startswith(t) }}{{ s.endswith(t) }}{{ s.startswith(('f', 'b')) }}{{ s.find(t) }}{{ s.rfind(t) }}{{ s.count(t) }}",
    "{{ s.upper() }}|{{ s.lower() }}|{{ s.title() }}|{{ s.capitalize() }}|{{ s.swapcase() }}",
    "{{ s.replace(' ', '') }}|{{ s.replace('a', 'A', 1) }}|{{ ', '.join(ws) }}|{{ s.center(20, '*') }}|{{ s.ljust(12) }}|{{ s.rjust(12, '.') }}",
    "{{ s.partition(' ') }}{{ s.rpartition(' ') }}{{ s.zfill(8) }}{{ t.isdigit() }}{{ t.isalpha() }}{{ t.isspace() }}",
    "{{ s.removeprefix(t) }}|{{ s.removesuffix(t) }}|{{ s.index(t) if t in s else -1 }}",
    "{{ d.get('a') }}|{{ d.get('zz', 'dflt') }}|{{ d.keys()|list }}|{{ d.values()|list }}|{{ d.items()|list }}",
    "{{ d.items()|list }}|{{ d['items'] if 'items' in d else '-' }}|{{ d.name }}|{{ d.keys is callable }}",
    "{{ ns.count(1) }}{{ ns.index(ns[0]) if ns else '' }}",
    "{{ ws.append(1) }}",
    "{{ d.update({}) }}",
    "{{ s.__class__ }}",
    "{{ messages[0].content.strip() }}",
    "{{ s.strip is callable }}",
    "{{ undefined_thing.strip() }}",
    "{{ s.foo() }}",
    "{{ s.split('') }}",
]

SUBSCRIPTS = [
    "{{ s[0] }}|{{ s[-1] }}|{{ s[1:3] }}|{{ s[::-1] }}|{{ s[::2] }}|{{ s[-3:] }}|{{ s[:-2] }}",
    "{{ ns[0] }}|{{ ns[-1] }}|{{ ns[1:] }}|{{ ns[::-2] }}|{{ ns[10:] }}|{{ ns[-100:2] }}|{{ ns[5:1:-1] }}",
    "{{ messages[-1].role }}|{{ messages[0]['role'] }}|{{ messages[1:]|length }}|{{ messages[::-1][0].role }}",
    "{{ ds[0].name }}|{{ ds.0.name }}|{{ ds[99] }}|{{ d['a'] }}|{{ d.a }}|{{ d.zz }}",
    "{{ ns[n] }}",
    "{{ undefined_thing[0] }}",
    "{{ d[ns] }}",
    "{{ s[0:n:0] }}",
    "{{ (1, 2, 3)[1:] }}|{{ [1, 2, 3][-2] }}|{{ 'abc'[1] }}",
    "{{ tools[0].function.name if tools else '' }}|{{ tools[0]['function']['parameters']|tojson if tools else '' }}",
]

WHITESPACE = [
    "a  {{- s -}}  b  {%- if b -%}  c  {%- endif -%}  d",
    "line1\n  {% if b %}\n    yes\n  {% endif %}\nline2\n",
    "  {%+ if b %}keep{% endif +%}\nnext\n",
    "{# comment #}x{#- c -#}  y  {#+ c +#}\n z",
    "{% raw %}{{ not rendered }}{% if %}{% endraw %}|{{ s }}",
    "a\r\nb\r\n{% if b %}\r\nc{% endif %}\n\n",
    "{% for w in ws %}\n  {{ w }}\n{% endfor %}\n",
    "    {% for w in ws -%}\n    {{ w }}\n    {%- endfor %}   end",
    "{{ s }}\n",
    "{%- set a = 1 -%}\n\n   {{ a }}   \n\n{%- set b = 2 %}\n{{ b }}",
    "{{ 'a' }}\n{{ 'b' }}\n{% if true %}x{% endif %}\n{{ 'c' }}",
]

ERRORS = [
    "{{ raise_exception('Custom: ' ~ s) }}",
    "{% if n > 0 %}{{ raise_exception('positive ' ~ n) }}{% endif %}ok",
    "{{ raise_exception(n) }}",
    "{{ n() }}",
    "{{ undefined_fn() }}",
    "{{ s.strip(1) }}",
    "{{ x.y.z }}",
    "{% if %}{% endif %}",
    "{{ 1 + }}",
    "{% for %}",
    "{% endfor %}",
    "{{ }}",
    "{{ 'unterminated }}",
    "{% set = 1 %}",
    "{{ n|int(base=99) }}",
    "{{ [1, 2]|join(1) }}",
    "{{ (1, 2) + [3] }}",
    "{{ {'a': 1} + {} }}",
    "{{ {[1]: 2} }}",
    "{{ strftime_now('%Y') | length }}",
    "{{ namespace(a=1).a }} {{ dict(a=n, b=s) }} {{ dict([('k', 1)]) }}",
    "{{ range(200000)|length }}",
    "{{ 'x' * 5 }}{{ [0] * 3 }}",
    "{{ loop }}",
    "{{ message }}",
]


def synthetic_templates():
    return (PRINTING + ARITHMETIC + COMPARISON + LOGIC + LOOPS + ASSIGNMENT +
            MACROS + STRING_FILTERS + SEQUENCE_FILTERS + TESTS + METHODS +
            SUBSCRIPTS + WHITESPACE + ERRORS)
