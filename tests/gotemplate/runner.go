// The Go side of the differential test of Go templates (scripts/go-template-diff): real Go
// text/template with Sprig, run the ways Landscaper and KOTS run it, and a seeded generator of
// random templates. Test tooling, not product. Built from Debian's packages without modules:
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o runner tests/gotemplate/runner.go
//
// Commands:
//
//	runner gen SEED COUNT   print COUNT random cases, one JSON object a line
//	runner run              read cases (JSON lines, or {"cases": […]} files) on stdin, print
//	                        each case with its output and error under both paths, a line each
//
// A case is {"id", "src", "data"}: a template written with {{ }} and its data (JSON). The
// Landscaper path runs src over data with Sprig's functions minus env and expandenv and
// missingkey=zero (Landscaper's gotemplate executor); the KOTS path runs src with every {{
// written repl{{ (KOTS's second delimiters), Sprig's functions, and no data (KOTS executes its
// templates over nil).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
)

// Case is one template and its data.
type Case struct {
	ID   string      `json:"id"`
	Src  string      `json:"src"`
	Data interface{} `json:"data"`
}

// Outcome is what one path made of a case: the text written, or the error.
type Outcome struct {
	Out string `json:"out"`
	Err string `json:"err,omitempty"`
}

// Result is a case's outcome under both paths.
type Result struct {
	ID         string      `json:"id"`
	Src        string      `json:"src"`
	Data       interface{} `json:"data"`
	Landscaper Outcome     `json:"landscaper"`
	Kots       Outcome     `json:"kots"`
}

func landscaperFuncs() template.FuncMap {
	funcs := sprig.TxtFuncMap()
	delete(funcs, "env")
	delete(funcs, "expandenv")
	return funcs
}

// KotsSource is src with KOTS's second delimiters.
func KotsSource(src string) string {
	return strings.ReplaceAll(src, "{{", "repl{{")
}

func execute(src string, delims [2]string, funcs template.FuncMap, option string, data interface{}) (out Outcome) {
	defer func() {
		if r := recover(); r != nil {
			out = Outcome{Err: fmt.Sprintf("panic: %v", r)}
		}
	}()
	t := template.New("case").Delims(delims[0], delims[1]).Funcs(funcs)
	if option != "" {
		t = t.Option(option)
	}
	t, err := t.Parse(src)
	if err != nil {
		return Outcome{Err: err.Error()}
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return Outcome{Out: b.String(), Err: err.Error()}
	}
	return Outcome{Out: b.String()}
}

func run() error {
	lands, kots := landscaperFuncs(), sprig.TxtFuncMap()
	in := bufio.NewReader(os.Stdin)
	dec := json.NewDecoder(in)
	dec.UseNumber()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	emit := func(c Case) error {
		// Landscaper decodes its data from JSON: numbers are float64.
		raw, err := json.Marshal(c.Data)
		if err != nil {
			return err
		}
		var data interface{}
		if err := json.Unmarshal(raw, &data); err != nil {
			return err
		}
		return enc.Encode(Result{
			ID:         c.ID,
			Src:        c.Src,
			Data:       c.Data,
			Landscaper: execute(c.Src, [2]string{"{{", "}}"}, lands, "missingkey=zero", data),
			Kots:       execute(KotsSource(c.Src), [2]string{"repl{{", "}}"}, kots, "", nil),
		})
	}
	for {
		var value map[string]json.RawMessage
		if err := dec.Decode(&value); err != nil {
			if err.Error() == "EOF" {
				return nil
			}
			return err
		}
		if cases, ok := value["cases"]; ok {
			var list []Case
			if err := json.Unmarshal(cases, &list); err != nil {
				return err
			}
			for _, c := range list {
				if err := emit(c); err != nil {
					return err
				}
			}
			continue
		}
		var c Case
		raw, _ := json.Marshal(value)
		if err := json.Unmarshal(raw, &c); err != nil {
			return err
		}
		if err := emit(c); err != nil {
			return err
		}
	}
}

// GenData is the data every generated case reads.
var GenData = map[string]interface{}{
	"n": 3, "f": 1.5, "big": 1000000, "neg": -2, "s": "hello", "e": "", "b": true, "q": "a\"b\u00ad",
	"l": []interface{}{1, "a", 2.5, nil}, "el": []interface{}{}, "strs": []interface{}{"b", "a", "c"},
	"m":  map[string]interface{}{"a": 1, "b": "x", "c": nil},
	"em": map[string]interface{}{}, "nil": nil,
	"nested": map[string]interface{}{"in": map[string]interface{}{"k": "v"}, "list": []interface{}{map[string]interface{}{"a": 1}}},
}

type gen struct {
	r    *rand.Rand
	vars map[byte][]string // declared variables by type
	// fresh: lists and maps are literals, not data (values set into a map).
	fresh bool
	next  int
}

func (g *gen) pick(options ...string) string { return options[g.r.Intn(len(options))] }

// Types: s string, n number, l list, m map, b bool, a any.
func (g *gen) expr(t byte, depth int) string {
	if t == 'a' {
		t = "snlmb"[g.r.Intn(5)]
	}
	leaf := depth <= 0 || g.r.Intn(3) == 0
	if vars := g.vars[t]; len(vars) > 0 && g.r.Intn(4) == 0 {
		return vars[g.r.Intn(len(vars))]
	}
	a := func(t byte) string { return g.arg(t, depth-1) }
	switch t {
	case 's':
		if leaf {
			return g.pick(`"a"`, `"hello world"`, `""`, `"Ab-c_d e"`, `.s`, `.e`, `.q`, `"x,y,z"`, `"1.2.3"`, `"42"`, `" pad "`, `.m.b`, `.nested.in.k`)
		}
		return g.pick(
			"upper "+a('s'), "lower "+a('s'), "trim "+a('s'), "quote "+a('a'), "squote "+a('a'), "toString "+a('a'),
			"toJson "+a('a'), g.printf(depth), g.printf(depth), g.printf(depth), "print "+a('a')+" "+a('a'), "println "+a('a'),
			"cat "+a('a')+" "+a('a'), `join "," `+a('l'), `replace "a" "b" `+a('s'), "trunc "+g.small()+" "+a('s'),
			"substr 0 2 "+a('s'), "nospace "+a('s'), "repeat 2 "+a('s'), "b64enc "+a('s'), "title "+a('s'),
			"default "+a('s')+" "+a('a'), "html "+a('a'), "js "+a('a'), "urlquery "+a('a'), "html "+a('a')+" "+a('a'),
			"js "+a('a')+" "+a('a'), "urlquery "+a('a')+" "+a('a'), "indent 2 "+a('s'), "nindent 2 "+a('s'),
			"typeOf "+a('a'), "kindOf "+a('a'), `semver "1.2.3"`, `(semver "1.2.3-rc.1+b").Major`,
			`plural "one" "many" `+a('n'), "sha256sum "+a('s'), "abbrev 5 "+a('s'), "snakecase "+a('s'),
			"camelcase "+a('s'), "kebabcase "+a('s'), `trimSuffix "o" `+a('s'), `trimPrefix "h" `+a('s'),
			"ternary "+a('s')+" "+a('s')+" "+a('b'), "coalesce "+a('a')+" "+a('a'),
			"index "+a('l')+" 0", "first "+a('l'), "last "+a('l'), `index .m "b"`, `get `+a('m')+` "a"`,
			"toStrings "+a('l'), "len "+a('a'), "typeOf (add 1 2)", "typeOf (keys (dict))", "typeOf (rest (list))", "regexFind "+`"[a-z]+" `+a('s'),
			`regexReplaceAll "l+" `+a('s')+` "L"`, "wrap 3 "+a('s'), "b64dec "+a('s'),
		)
	case 'n':
		if leaf {
			return g.pick("0", "1", "3", "-2", "1.5", "1e6", "2.0", "0x10", ".n", ".f", ".big", ".neg", "7", "100")
		}
		return g.pick(
			"add "+a('n')+" "+a('n'), "sub "+a('n')+" "+a('n'), "mul "+a('n')+" "+a('n'), "div "+a('n')+" 2",
			"mod "+a('n')+" 2", "add1 "+a('n'), "max "+a('n')+" "+a('n'), "min "+a('n')+" "+a('n'), "len "+a('l'),
			"len "+a('m'), "len "+a('s'), `atoi "12"`, "int "+a('a'), "int64 "+a('a'), "float64 "+a('a'), "floor "+a('n'),
			"ceil "+a('n'), "round "+a('n')+" 1", "addf "+a('n')+" "+a('n'), "mulf "+a('n')+" 2",
		)
	case 'l':
		if leaf && g.fresh {
			return g.pick("(list)", `(list "x" "y")`, "(list 1 2 3)")
		}
		if leaf {
			return g.pick(".l", ".el", ".strs", "(list)", ".nested.list", `(list "x" "y")`, "(list 1 2 3)")
		}
		return g.pick(
			"list "+a('a')+" "+a('a'), "list "+a('a'), "rest "+a('l'), "initial "+a('l'), "mustRest "+a('l'),
			"mustInitial "+a('l'), "append "+a('l')+" "+a('a'), "prepend "+a('l')+" "+a('a'), "concat "+a('l')+" "+a('l'),
			"uniq "+a('l'), "reverse "+a('l'), "compact "+a('l'), "sortAlpha (keys "+a('m')+")", "sortAlpha "+a('l'),
			"until 3", "untilStep 0 6 2", `splitList "," `+a('s'), "without "+a('l')+" "+a('a'), "slice "+a('l')+" 1",
			"toStrings "+a('l'), `pluck "a" `+a('m')+" "+a('m'), "rest (list)", "initial (list)", "list | rest",
			"mustRest (list)", "mustInitial (list)", `regexFindAll "[a-z]" `+a('s')+" -1", "chunk 2 "+a('l'),
		)
	case 'm':
		if leaf && g.fresh {
			return g.pick("(dict)", `(dict "a" 1)`, `(dict "a" (dict "b" 2))`)
		}
		if leaf {
			return g.pick(".m", ".em", ".nested", "(dict)", `(dict "a" 1)`, `.nested.in`)
		}
		return g.pick(
			// Changed maps are fresh ones here: a data map changed in place could come to hold
			// itself, a cycle Go cannot print (mutation writes the statements that change them).
			`dict "a" `+a('a')+` "b" `+a('a'), `dict "k" `+a('a'), `set (dict "a" 1) "k" `+a('a'),
			`unset (dict "a" 1 "b" 2) "a"`, `merge (dict "z" 0) `+a('m'), `mergeOverwrite (dict "a" 0) `+a('m'), `pick `+a('m')+` "a"`, `omit `+a('m')+` "a"`,
			"deepCopy "+a('a'), `merge (dict "a" nil) `+a('m'), `fromJson "{\"a\":1}"`, "deepCopy nil",
		)
	default: // 'b'
		if leaf {
			return g.pick("true", "false", ".b", ".nil")
		}
		return g.pick(
			"eq "+a('a')+" "+a('a'), "ne "+a('s')+" "+a('s'), "lt "+a('n')+" "+a('n'), "le "+a('n')+" "+a('n'),
			"gt "+a('n')+" "+a('n'), "ge "+a('n')+" "+a('n'), "and "+a('a')+" "+a('a'), "or "+a('a')+" "+a('a'),
			"not "+a('a'), "empty "+a('a'), "has "+a('a')+" "+a('l'), "hasKey "+a('m')+` "a"`, `kindIs "float64" `+a('a'),
			`kindIs "int64" `+a('a'), `typeIs "string" `+a('a'), `contains "l" `+a('s'), `hasPrefix "h" `+a('s'),
			`regexMatch "^h" `+a('s'), `regexMatch "a" (list "a")`, `eq `+a('n')+" 3", "eq "+a('s')+` "a"`,
		)
	}
}

// arg is an expression usable as an argument: parenthesized unless it is a single term.
func (g *gen) arg(t byte, depth int) string {
	e := g.expr(t, depth)
	if strings.ContainsAny(e, " |") && !strings.HasPrefix(e, `"`) || strings.HasPrefix(e, "(semver") {
		return "(" + e + ")"
	}
	return e
}

func (g *gen) small() string { return g.pick("0", "1", "3", "-1", "10") }

var verbs = []string{
	"%d", "%s", "%v", "%q", "%x", "%X", "%f", "%.3f", "%5d", "%-5s|", "%t", "%T", "%#v", "%e", "%g", "%c",
	"%o", "%b", "%+d", "%05.1f", "%s %s", "%d%%", "%v %v", "%U", "%8.2f", "%x %X", "%3c", "%-4d|", "%+v", "%%",
}

func (g *gen) printf(depth int) string {
	format := verbs[g.r.Intn(len(verbs))]
	if g.r.Intn(4) == 0 {
		format = "a=" + format + " b=" + verbs[g.r.Intn(len(verbs))]
	}
	args := ""
	for i, n := 0, g.r.Intn(3)+1; i < n; i++ {
		args += " " + g.arg('a', depth-1)
	}
	return "printf " + strconv.Quote(format) + args
}

func (g *gen) open() string  { return g.pick("{{", "{{", "{{- ") }
func (g *gen) close() string { return g.pick("}}", "}}", " -}}") }

func (g *gen) variable(t byte) string {
	g.next++
	name := fmt.Sprintf("$v%d", g.next)
	g.vars[t] = append(g.vars[t], name)
	return name
}

// statements writes up to n statements at nesting level depth.
func (g *gen) statements(b *strings.Builder, n, depth int) {
	for i := 0; i < n; i++ {
		switch k := g.r.Intn(20); {
		case k < 3:
			b.WriteString(g.pick("a", " ", "\n", "x: ", "  - ", "b ", "\n  "))
		case k < 8:
			b.WriteString(g.open() + " " + g.expr('a', 2) + " " + g.close())
		case k < 10:
			b.WriteString(g.pick("{{/* c */}}", "{{- /* c */}}", "{{/* c */ -}}", "{{- /* c */ -}}", "{{- /* c */ }}", "{{ /* c */ -}}"))
		case k < 12:
			t := "snlmb"[g.r.Intn(5)]
			e := g.expr(t, 2)
			b.WriteString(g.open() + " " + g.variable(t) + " := " + e + " " + g.close())
		case k < 15:
			g.mutation(b)
		case k < 17 && depth < 2:
			b.WriteString(g.open() + " if " + g.expr('b', 1) + " " + g.close())
			g.statements(b, 1+g.r.Intn(2), depth+1)
			if g.r.Intn(2) == 0 {
				b.WriteString("{{ else }}")
				g.statements(b, 1, depth+1)
			}
			b.WriteString(g.open() + " end " + g.close())
		case k < 18 && depth < 2:
			b.WriteString(g.open() + " with " + g.expr('a', 1) + " " + g.close() + "{{ . }}")
			b.WriteString(g.open() + " end " + g.close())
		case depth < 2:
			src := g.pick("l", "m")
			key, val := g.variable('a'), g.variable('a')
			b.WriteString(g.open() + " range " + key + ", " + val + " := " + g.expr(src[0], 1) + " " + g.close())
			b.WriteString(key + "={{ " + val + " }};")
			g.statements(b, g.r.Intn(2), depth+1)
			b.WriteString(g.open() + " end " + g.close())
		default:
			b.WriteString("{{ " + g.expr('a', 1) + " }}")
		}
	}
}

// mutation writes the patterns templates build maps with: set, unset, merge and
// mergeOverwrite through a variable, then the map read through another one.
func (g *gen) mutation(b *strings.Builder) {
	var m string
	if maps := g.vars['m']; len(maps) > 0 && g.r.Intn(2) == 0 {
		m = maps[g.r.Intn(len(maps))]
	} else {
		m = g.variable('m')
		b.WriteString("{{- " + m + " := " + g.pick("dict", `dict "a" 1`, ".m", ".nested", `dict "inner" (dict)`) + " }}")
	}
	// Values are built without variables: a map set into itself is a cycle Go cannot print.
	saved := g.vars
	g.vars, g.fresh = map[byte][]string{}, true
	value, other := g.arg('a', 1), g.arg('m', 1)
	g.vars, g.fresh = saved, false
	alias := g.variable('m')
	b.WriteString("{{- " + alias + " := " + g.pick(m, "dict \"in\" "+m) + " }}")
	switch g.r.Intn(6) {
	case 0, 1:
		b.WriteString("{{- $_ := set " + m + ` "k" ` + value + " }}")
	case 2:
		b.WriteString("{{- $_ := unset " + m + ` "a" }}`)
	case 3:
		b.WriteString("{{- $_ := merge " + m + " " + other + " }}")
	case 4:
		b.WriteString("{{- $_ := mergeOverwrite " + m + " " + other + " }}")
	default:
		b.WriteString("{{- $_ := set (index " + m + ` "inner" | default (dict)) "x" 1 }}`)
	}
	b.WriteString(g.pick("{{ "+m+" }}", "{{ "+alias+" }}", "{{ toJson "+alias+" }}", "{{ len "+m+" }}", "{{ "+m+".k }}"))
}

func generate(seed int64, count int) error {
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	r := rand.New(rand.NewSource(seed))
	for i := 0; i < count; i++ {
		g := &gen{r: r, vars: map[byte][]string{}}
		var b strings.Builder
		g.statements(&b, 1+r.Intn(4), 0)
		if err := enc.Encode(Case{ID: fmt.Sprintf("gen/%d/%d", seed, i), Src: b.String(), Data: GenData}); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	var err error
	switch {
	case len(os.Args) == 4 && os.Args[1] == "gen":
		seed, e1 := strconv.ParseInt(os.Args[2], 10, 64)
		count, e2 := strconv.Atoi(os.Args[3])
		if e1 != nil || e2 != nil {
			err = fmt.Errorf("gen SEED COUNT: two integers")
		} else {
			err = generate(seed, count)
		}
	case len(os.Args) == 2 && os.Args[1] == "run":
		err = run()
	default:
		err = fmt.Errorf("usage: runner gen SEED COUNT | runner run")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		os.Exit(2)
	}
}
