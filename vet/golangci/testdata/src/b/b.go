package b

import "net/http"

func serve(h http.Handler) error {
	return http.ListenAndServe(":8080", h) // want `http.ListenAndServe serves with no timeouts at all`
}
