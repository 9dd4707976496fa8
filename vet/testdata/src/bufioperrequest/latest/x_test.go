package latest_test

import (
	"bufio"
	"net/http"
)

// An external test package: no finding here either.
func handler(w http.ResponseWriter, r *http.Request) {
	_ = bufio.NewReader(r.Body)
}
