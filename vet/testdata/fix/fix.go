// Package fix is a module with fixable findings, for hotpath vet --fix:
// fix.go.golden is this file after the fixes.
package fix

import (
	"encoding/json"
	"net/http"
)

// client has no Timeout (HP016, fixable: the fix adds the time import that
// HP013's fixes add too, once).
var client = &http.Client{}

// Fetch sends a request with a header literal (HP007, fixable) and closes
// the body undrained (HP012, fixable: a bounded drain before the deferred
// Close, and the io import).
func Fetch(url, token string, v any) error {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return err
	}
	req.Header = http.Header{"Authorization": {"Bearer " + token}}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

// Serve and ServeAdmin serve with no timeouts (HP013, and HP009 on
// ServeAdmin's literal): each fix adds the time import; it must be added
// once, and both timeouts once.
func Serve(h http.Handler) error {
	return http.ListenAndServe(":8080", h)
}

func ServeAdmin(h http.Handler) error {
	srv := &http.Server{Addr: ":8081", Handler: h}
	return srv.ListenAndServe()
}
