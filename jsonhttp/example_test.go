package jsonhttp_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/hotpathhq/hotpath/jsonhttp"
)

type createItem struct {
	Name string `json:"name"`
}

func createItemHandler(w http.ResponseWriter, r *http.Request) {
	var in createItem
	if err := jsonhttp.Decode(r, &in, jsonhttp.DecodeOptions{MaxBytes: 64 << 10, DisallowUnknownFields: true}); err != nil {
		var de *jsonhttp.DecodeError
		errors.As(err, &de)
		jsonhttp.Error(w, de.Status, de.Error())
		return
	}
	if err := jsonhttp.Write(w, http.StatusCreated, map[string]string{"created": in.Name}); err != nil {
		// The response is a 500 if encoding failed; a write error means the
		// client left. Either way, log it.
		return
	}
}

func Example() {
	for _, body := range []string{`{"name":"gopher"}`, `{"name":"gopher","admin":true}`} {
		r := httptest.NewRequest("POST", "/items", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		createItemHandler(w, r)
		fmt.Print(w.Code, " ", w.Body.String())
	}
	// Output:
	// 201 {"created":"gopher"}
	// 400 {"error":"unknown field \"admin\""}
}
