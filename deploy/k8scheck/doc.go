// Package k8scheck holds one test: the Job that `hotpath load k8s` prints
// decodes strictly into the real Kubernetes API type (k8s.io/api batch/v1
// Job: an unknown or misspelt field fails) and sets what a sharded run
// needs. It is a module of its own so that hotpath's go.mod stays small.
//
//	cd deploy/k8scheck && go test ./...
//
// With HOTPATH_KUBECTL_DRYRUN=1 the test also pipes the Job to
// `kubectl apply --dry-run=client -f -`, which needs a reachable cluster
// (kubectl reads the API's schema from it).
package k8scheck
