package readallproxy

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
)

// ---- must flag ----

func proxy(w http.ResponseWriter, upstream *http.Response) error {
	body, err := io.ReadAll(upstream.Body) // want `the response body is read whole only to be written`
	if err != nil {
		return err
	}
	w.WriteHeader(upstream.StatusCode)
	_, err = w.Write(body)
	return err
}

func forward(w http.ResponseWriter, r *http.Request) {
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body) // want `the response body is read whole`
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

// ---- must not flag ----

func goodStream(w http.ResponseWriter, upstream *http.Response) error {
	_, err := io.Copy(w, upstream.Body)
	return err
}

// The bytes are rewritten: reading them whole is the point.
func goodRewrite(w http.ResponseWriter, upstream *http.Response) {
	b, _ := io.ReadAll(upstream.Body)
	w.Write(bytes.ReplaceAll(b, []byte("a"), []byte("b")))
}

// The bytes are also verified before forwarding.
func goodVerify(w http.ResponseWriter, upstream *http.Response, verify func([]byte) bool) {
	b, _ := io.ReadAll(upstream.Body)
	if !verify(b) {
		return
	}
	w.Write(b)
}

// A request body, not a response: another rule's business.
func goodRequestBody(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	w.Write(b)
}

// Not written to a ResponseWriter.
func goodReturn(resp *http.Response) ([]byte, error) {
	return io.ReadAll(resp.Body)
}
