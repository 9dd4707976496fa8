// Package layout holds checks of the module's source tree as a whole:
//   - no file over 500 lines without a written reason (lines_test.go);
//   - in the packages split by engine, HTTP/1.1 and HTTP/2 files meet only
//     in one dispatch file (engines_test.go);
//   - server tests start their servers on the mode matrix, or say why not
//     (servertests_test.go);
//   - docs/architecture.md names every file of the packages it walks
//     through (architecture_test.go).
//
// It has no code of its own; its tests run with the module's.
package layout
