package main

import "errors"

// fileOwner: Windows files have no owner uid.
func fileOwner(path string) (int, error) { return 0, errors.New("no file owner uid on Windows") }
