package tlspercall

import (
	"crypto/tls"
	"net/http"
	"net/http/httputil"
)

// ---- must flag (SUSE/connect-ng callHTTP before the fix) ----

func callHTTP(req *http.Request, insecure bool) (*http.Response, error) {
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: insecure}, // want `a new tls.Config without ClientSessionCache in a per-call Transport`
		Proxy:           http.ProxyFromEnvironment,
	}
	httpclient := &http.Client{Transport: tr}
	httputil.DumpRequestOut(req, true)
	return httpclient.Do(req)
}

func cloned(req *http.Request) (*http.Response, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{ServerName: "api"} // want `a new tls.Config without ClientSessionCache`
	return (&http.Client{Transport: tr}).Do(req)
}

// ---- must not flag ----

var sharedTLS = &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}}

func goodShared(req *http.Request) (*http.Response, error) {
	return (&http.Client{Transport: sharedTLS}).Do(req)
}

func goodSessionCache(req *http.Request) (*http.Response, error) {
	tr := &http.Transport{TLSClientConfig: &tls.Config{ClientSessionCache: tls.NewLRUClientSessionCache(64)}}
	return tr.RoundTrip(req)
}

func goodConstructor() *http.Transport {
	return &http.Transport{TLSClientConfig: &tls.Config{}}
}

func goodNoRequest() *tls.Config {
	tr := &http.Transport{TLSClientConfig: &tls.Config{}}
	return tr.TLSClientConfig
}

func goodSuppressed(req *http.Request) {
	tr := &http.Transport{TLSClientConfig: &tls.Config{}} //hotpath:ignore HP010 test-only dialer
	tr.RoundTrip(req)
}
