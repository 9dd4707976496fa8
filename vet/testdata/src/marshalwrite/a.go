package marshalwrite

import (
	"encoding/json"
	"log"
	"net/http"
	"strconv"
)

type response struct{ Name string }

// ---- must flag ----

func handler(w http.ResponseWriter, r *http.Request) {
	resp := response{Name: r.URL.Path}
	data, err := json.Marshal(resp) // want `json.Marshal builds a slice only to write it`
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(data)
}

// Flagged, but no fix: the write's error is used.
func handlerNoFix(w http.ResponseWriter, v *response) error {
	b, err := json.Marshal(v) // want `json.Marshal builds a slice`
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// ---- must not flag ----

func goodEncoder(w http.ResponseWriter, v response) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		log.Printf("encode: %v", err)
	}
}

// Content-Length needs the bytes.
func goodContentLength(w http.ResponseWriter, v response) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

// Cached: marshal once, write many.
func goodCached(w http.ResponseWriter, cache map[string][]byte, v response) {
	b, _ := json.Marshal(v)
	cache[v.Name] = b
	w.Write(b)
}

// Not a ResponseWriter.
func goodOtherWriter(v response, out interface{ Write([]byte) (int, error) }) {
	b, _ := json.Marshal(v)
	out.Write(b)
}
