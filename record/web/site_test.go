package web

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rawGet sends path unaltered (no client-side cleaning) and returns the
// status code and body.
func rawGet(t *testing.T, host, path string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestSiteServesOnlyItsFolder(t *testing.T) {
	dir := t.TempDir()
	site := filepath.Join(dir, "site")
	os.MkdirAll(filepath.Join(site, "sub"), 0o755)
	os.WriteFile(filepath.Join(site, "index.html"), []byte("<title>in</title>"), 0o644)
	os.WriteFile(filepath.Join(site, "sub", "page.html"), []byte("<title>page</title>"), 0o644)
	secret := filepath.Join(dir, "secret.txt")
	os.WriteFile(secret, []byte("SECRET"), 0o644)
	if err := os.Symlink(secret, filepath.Join(site, "out.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(site, "updir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/page.html", filepath.Join(site, "alias.html")); err != nil {
		t.Fatal(err)
	}

	s, err := OpenSite(site)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	host := s.base.Host
	if !strings.HasPrefix(host, "127.0.0.1:") {
		t.Fatalf("serving on %s, want 127.0.0.1", host)
	}
	for _, c := range []struct {
		path string
		code int
	}{
		{"/", 200},
		{"/sub/page.html", 200},
		{"/alias.html", 200}, // a link that stays inside
		{"/missing.html", 404},
		{"/../secret.txt", 404},
		{"/sub/../../secret.txt", 404},
		{"/%2e%2e/secret.txt", 404},
		{"/out.txt", 404},          // a link out of the folder
		{"/updir/secret.txt", 404}, // through a linked folder
		{"/updir/", 404},
	} {
		code, body := rawGet(t, host, c.path)
		if code != c.code || strings.Contains(body, "SECRET") {
			t.Errorf("GET %s: %d %q, want %d", c.path, code, body, c.code)
		}
	}
	resp, err := http.Post(s.Start(), "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", resp.StatusCode)
	}

	base := "http://" + host
	for _, c := range []struct {
		href   string
		follow bool
	}{
		{base + "/sub/page.html", true},
		{base + "/sub/page.html#frag", true},
		{base + "/sub/", true},
		{base + "/missing.html", false},
		{base + "/out.txt", false},
		{base + "/../secret.txt", false},
		{"http://127.0.0.2:1/sub/page.html", false},
		{"https://example.com/", false},
		{"mailto:a@b", false},
	} {
		if got := s.Followable(c.href); got != c.follow {
			t.Errorf("Followable(%s) = %v, want %v", c.href, got, c.follow)
		}
	}
	if s.StartPath() != "/" {
		t.Errorf("start path %q, want /", s.StartPath())
	}
}

func TestSiteStartPage(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "b"), 0o755)
	os.WriteFile(filepath.Join(dir, "b", "z.html"), []byte("z"), 0o644)
	os.WriteFile(filepath.Join(dir, "b", "a.htm"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("n"), 0o644)
	s, err := OpenSite(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.StartPath() != "/b/a.htm" {
		t.Errorf("start %q, want /b/a.htm (the first page in walk order)", s.StartPath())
	}
}

func TestSiteErrors(t *testing.T) {
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "readme.txt"), []byte("no pages"), 0o644)
	for _, c := range []struct{ spec, want string }{
		{empty, "no HTML files"},
		{filepath.Join(empty, "nope"), "no such file"},
		{filepath.Join(empty, "readme.txt"), "not a folder"},
		{"http://", "bad site URL"},
	} {
		s, err := OpenSite(c.spec)
		if err == nil {
			s.Close()
			t.Errorf("OpenSite(%q): no error", c.spec)
			continue
		}
		if !strings.HasPrefix(err.Error(), "record web: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("OpenSite(%q): %v, want %q", c.spec, err, c.want)
		}
	}
}

func TestSiteURL(t *testing.T) {
	srv := httptest.NewServer(http.FileServer(http.Dir("testdata/site")))
	defer srv.Close()
	s, err := OpenSite(srv.URL + "/guide/intro.html")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		href   string
		follow bool
	}{
		{srv.URL + "/guide/faq.html", true},
		{srv.URL + "/guide/notes.txt", true},
		{srv.URL + "/guide/archive.tar.gz", false},
		{srv.URL + "/guide/missing.html", false},
		{srv.URL + "/index.html", false}, // above the start page's folder
	} {
		if got := s.Followable(c.href); got != c.follow {
			t.Errorf("Followable(%s) = %v, want %v", c.href, got, c.follow)
		}
	}
	if got := s.Resolve("/guide/faq.html"); got != srv.URL+"/guide/faq.html" {
		t.Errorf("Resolve: %s", got)
	}
	if _, err := OpenSite(srv.URL + "/missing.html"); err == nil || !strings.Contains(err.Error(), "does not answer") {
		t.Errorf("a missing start page: %v", err)
	}
}
