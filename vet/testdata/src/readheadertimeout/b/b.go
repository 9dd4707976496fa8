package b

import (
	"net/http"
)

func serve(h http.Handler) error {
	return http.ListenAndServe(":8080", h) // want `http.ListenAndServe serves with no timeouts at all`
}

// A local variable named time: no fix is offered, the finding stays.
func shadowed(h http.Handler, time int) error {
	_ = time
	return http.ListenAndServe(":8081", h) // want `http.ListenAndServe serves with no timeouts at all`
}
