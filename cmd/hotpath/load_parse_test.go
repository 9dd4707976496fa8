package main

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/load"
)

// --body reads what load.ResponseBody's String writes, and nothing else.
func TestParseResponseBody(t *testing.T) {
	for s, want := range map[string]load.ResponseBody{"drain": {Mode: load.DrainBody}, "close": {Mode: load.CloseBody}, "limit:100": {Mode: load.LimitBody, Limit: 100}} {
		if got, err := parseResponseBody(s); err != nil || got != want || got.String() != s {
			t.Errorf("parseResponseBody(%q) = %v, %v", s, got, err)
		}
	}
	for _, bad := range []string{"limit:", "limit:-1", "keep", "limit:x"} {
		if _, err := parseResponseBody(bad); err == nil {
			t.Errorf("parseResponseBody(%q) accepted", bad)
		}
	}
}

func TestParseStages(t *testing.T) {
	st, err := parseStages("30s:1000, 1m:5000,30s:0")
	if err != nil || len(st) != 3 || st[1] != (load.Stage{Duration: time.Minute, Rate: 5000}) {
		t.Fatalf("%+v %v", st, err)
	}
	for _, bad := range []string{"", "30s", "30:1000", "0s:10", "-1s:10", "1s:-5", "1s:x", "1s:NaN"} {
		if _, err := parseStages(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseTargetsHTTP(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "body.json"), []byte(`{"a":1}`), 0o644)
	in := `# a comment
GET http://h/a
X-A: 1

POST http://h/b
Content-Type: application/json
@body.json

PUT http://h/c
`
	ts, err := parseTargets(strings.NewReader(in), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 3 || ts[0].Header.Get("X-A") != "1" || string(ts[1].Body) != `{"a":1}` || ts[1].Header.Get("Content-Type") != "application/json" ||
		ts[2].Method != "PUT" || ts[2].URL != "http://h/c" || ts[0].Weight != 1 {
		t.Errorf("%+v", ts)
	}
	for _, bad := range []string{"", "GET\n", "GET http://h/\nno colon here\n", "GET http://h/\n@missing.json\n"} {
		if _, err := parseTargets(strings.NewReader(bad), dir); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseTargetsJSON(t *testing.T) {
	body := base64.StdEncoding.EncodeToString([]byte("payload"))
	in := `{"method":"GET","url":"http://h/a","weight":5}
{"method":"POST","url":"http://h/b","header":{"Content-Type":["text/plain"]},"body":"` + body + `"}
`
	ts, err := parseTargets(strings.NewReader(in), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].Weight != 5 || ts[1].Weight != 1 || string(ts[1].Body) != "payload" || ts[1].Header.Get("Content-Type") != "text/plain" {
		t.Errorf("%+v", ts)
	}
	for _, bad := range []string{`{"url":"http://h/","weight":0}`, `{"url":"http://h/","wait":1}`, `{"url":`} {
		if _, err := parseTargets(strings.NewReader(bad), ""); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
