// Package shape holds the test that keeps the module's code in the shape
// its maintainers agreed on: no function over 80 lines and no file over
// 600 lines outside tests and generated code. Long functions hid the
// steps of a call; long files mixed concerns that now have rooms of their
// own.
package shape
