//go:build !unix

package web

// killUsing does nothing where there is no /proc to search.
func killUsing(dir string) {}
