package headerliteral

import "net/http"

var httpClient = &http.Client{}

// ---- must flag ----

func send(url, token, traceID string) (*http.Response, error) {
	req, _ := http.NewRequest("POST", url, nil)
	req.Header = http.Header{ // want `an http.Header literal replaces the request's header map: use req.Header.Set, which reuses the map and canonicalizes keys \(non-canonical here: "x-trace-id"\)`
		"Authorization": {"Bearer " + token},
		"x-trace-id":    {traceID},
		"Accept":        {"application/json", "text/plain"},
	}
	return httpClient.Do(req)
}

func oneLine(url string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header = http.Header{"Accept": []string{"application/json"}} // want `an http.Header literal replaces the request's header map`
	return httpClient.Do(req)
}

// ---- must not flag ----

func goodSet(url, token string) (*http.Response, error) {
	req, _ := http.NewRequest("POST", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	return httpClient.Do(req)
}

// A request literal has a nil Header: the literal is how to set it.
func goodRequestLiteral(base *http.Request) *http.Request {
	req := &http.Request{Method: "GET", URL: base.URL}
	req.Header = http.Header{"Accept": {"*/*"}}
	return req
}

// Clearing the headers.
func goodClear(url string) *http.Request {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header = http.Header{}
	return req
}

// A shared header set copied from elsewhere is not a literal.
func goodCopy(url string, common http.Header) *http.Request {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header = common.Clone()
	return req
}
