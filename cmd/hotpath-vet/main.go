// Command hotpath-vet runs the hotpath vet rules (HP001-HP014) as a
// standalone analysis driver or under go vet:
//
//	go vet -vettool=$(which hotpath-vet) ./...
//	hotpath-vet ./...
//
// Each rule is a flag named after its analyzer (-undrainedbody=false turns
// HP012 off). For text, JSON and SARIF reports use 'hotpath vet'.
package main

import (
	"golang.org/x/tools/go/analysis/multichecker"

	"github.com/hotpathhq/hotpath/vet"
)

func main() { multichecker.Main(vet.Analyzers()...) }
