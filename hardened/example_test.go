package hardened_test

import (
	"fmt"
	"net/http"

	"github.com/hotpathhq/hotpath/hardened"
)

func ExampleServer() {
	mux := http.NewServeMux()
	srv := hardened.Server(&http.Server{
		Addr:        ":8080",
		Handler:     mux,
		IdleTimeout: 400e9, // behind an AWS NLB (350 s): kept as set
	})
	fmt.Println(srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout, srv.MaxHeaderBytes)
	// srv.ListenAndServe()
	// Output: 10s 1m0s 1m0s 6m40s 16384
}
