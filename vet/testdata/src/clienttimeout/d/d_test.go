package d

import (
	"net/http"
	"testing"
)

// Tests build throwaway clients on purpose.
func TestGet(t *testing.T) {
	c := &http.Client{}
	if _, err := c.Get("http://127.0.0.1:1"); err == nil {
		t.Skip()
	}
	http.Get("http://127.0.0.1:1")
}
