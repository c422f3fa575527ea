// Added to a copy of Sprig by tests/gotemplate/port/port, whose runtv and runRaw it makes call
// record: writes the templates Sprig's own tests run, with their data as JSON, as differential
// cases to $PORT_OUT. Tests whose result depends on the clock, randomness, the environment or
// the network are left out (their templates name such a function), and so are cases whose
// data JSON cannot hold.
package sprig

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

type portedCase struct {
	ID   string      `json:"id"`
	Src  string      `json:"src"`
	Data interface{} `json:"data"`
}

var (
	ported     []portedCase
	portedSeen = map[string]int{}
	// Functions whose result is not the same on every run or machine.
	unstable = regexp.MustCompile(`\b(rand\w*|uuidv4|now|date\w*|\w*Date\w*|ago|env|expandenv|genPrivateKey|genCA|genSelfSigned\w*|genSignedCert\w*|buildCustomCert|bcrypt|htpasswd|encryptAES|shuffle|getHostByName|unixEpoch|duration\w*|toDate|mustToDate|htmlDate\w*|dateInZone|dateModify|mustDateModify)\b`)
)

func record(tpl string, vars interface{}) {
	if unstable.MatchString(tpl) {
		return
	}
	raw, err := json.Marshal(vars)
	if err != nil {
		return
	}
	var data interface{}
	if json.Unmarshal(raw, &data) != nil {
		return
	}
	// The test that ran it: the first caller named Test….
	name := "unknown"
	for skip := 2; skip < 8; skip++ {
		pc, _, _, ok := runtime.Caller(skip)
		if !ok {
			break
		}
		fn := runtime.FuncForPC(pc).Name()
		if i := strings.LastIndex(fn, ".Test"); i >= 0 {
			name = strings.SplitN(fn[i+1:], ".", 2)[0]
			break
		}
	}
	portedSeen[name]++
	ported = append(ported, portedCase{ID: fmt.Sprintf("sprig/%s/%d", name, portedSeen[name]), Src: tpl, Data: data})
	_ = reflect.TypeOf
}

func TestMain(m *testing.M) {
	code := m.Run()
	out, err := os.Create(os.Getenv("PORT_OUT"))
	if err == nil {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", " ")
		err = enc.Encode(ported)
		out.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}
