// Package layout holds checks of the module's source tree as a whole
// (lines_test.go: no file over 500 lines without a written reason). It has
// no code of its own; its tests run with the module's.
package layout
