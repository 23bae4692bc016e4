package web

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Site is what the recorder explores: a folder of HTML served on 127.0.0.1,
// or pages already served at a URL. Its methods are safe for concurrent use.
type Site struct {
	base  *url.URL // scheme, host and the path prefix pages must stay under
	start *url.URL // the start page

	root *os.Root     // folder sites: the folder; nil for URL sites
	srv  *http.Server // folder sites: the server
	done chan error   // folder sites: Serve's result

	client *http.Client // URL sites: for HEAD checks
	mu     sync.Mutex
	cache  map[string]bool // URL sites: Exists answers by path
}

// pageExts are the extensions of links the policy follows: pages the
// browser shows rather than downloads. A path without an extension or
// ending in "/" is followed too.
var pageExts = map[string]bool{".html": true, ".htm": true, ".xhtml": true, ".txt": true}

// OpenSite opens spec, a folder of HTML files or an http(s) URL. A folder is
// served on a random port of 127.0.0.1 until Close; its start page is
// index.html when there is one, else the first HTML file in lexical walk
// order. Requests never leave the folder: ".." is refused and so are
// symbolic links that lead out of it (Debian's doc packages link jquery.js
// to /usr/share/javascript: those come back 404).
func OpenSite(spec string) (*Site, error) {
	if strings.HasPrefix(spec, "http://") || strings.HasPrefix(spec, "https://") {
		return openURL(spec)
	}
	return openFolder(spec)
}

func openURL(spec string) (*Site, error) {
	u, err := url.Parse(spec)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("record web: bad site URL %q", spec)
	}
	base := *u
	base.RawQuery, base.Fragment = "", ""
	if !strings.HasSuffix(base.Path, "/") {
		base.Path = path.Dir(base.Path) + "/"
		if base.Path == "//" {
			base.Path = "/"
		}
	}
	s := &Site{base: &base, start: u, client: &http.Client{Timeout: 10 * time.Second}, cache: map[string]bool{}}
	if !s.Exists(u.String()) {
		return nil, fmt.Errorf("record web: site %s does not answer 200", spec)
	}
	return s, nil
}

func openFolder(dir string) (*Site, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("record web: site %s: %w", dir, err)
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("record web: site %s is not a folder or an http(s) URL", dir)
	}
	start, err := startPage(real)
	if err != nil {
		return nil, fmt.Errorf("record web: site %s: %w", dir, err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("record web: site %s: %w", dir, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("record web: serving %s: %w", dir, err)
	}
	base := &url.URL{Scheme: "http", Host: ln.Addr().String(), Path: "/"}
	s := &Site{
		base:  base,
		start: base.ResolveReference(&url.URL{Path: start}),
		root:  root,
		done:  make(chan error, 1),
	}
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// errNoHTML is the error of a folder without an HTML file.
var errNoHTML = errors.New("no HTML files (want index.html or some *.html)")

// startPage returns the path of dir's start page, relative to dir.
func startPage(dir string) (string, error) {
	if st, err := os.Stat(filepath.Join(dir, "index.html")); err == nil && st.Mode().IsRegular() {
		return "", nil // the server shows index.html at "/"
	}
	var found string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable corners are skipped
		}
		if !d.IsDir() && pageExts[strings.ToLower(filepath.Ext(p))] && filepath.Ext(p) != ".txt" {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			found = filepath.ToSlash(rel)
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if found == "" {
		return "", errNoHTML
	}
	return found, nil
}

// Handler returns the folder site's file server: GET and HEAD of files
// inside the folder, 404 for anything outside it. It is nil for URL sites.
func (s *Site) Handler() http.Handler {
	if s.root == nil {
		return nil
	}
	files := http.FileServerFS(s.root.FS())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if _, ok := s.rel(r.URL.Path); !ok {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	})
}

// rel returns the folder-relative name of a URL path, and false when it
// names nothing inside the folder (".." segments, links leading out, or a
// missing file).
func (s *Site) rel(urlPath string) (string, bool) {
	if strings.Contains(urlPath, "\x00") {
		return "", false
	}
	for _, seg := range strings.Split(urlPath, "/") {
		if seg == ".." {
			return "", false
		}
	}
	name := strings.TrimPrefix(path.Clean("/"+urlPath), "/")
	if name == "" {
		name = "."
	}
	if _, err := s.root.Stat(name); err != nil {
		return "", false // missing, or a link out of the folder
	}
	return name, true
}

// Start returns the start page's URL.
func (s *Site) Start() string { return s.start.String() }

// StartPath returns the start page's path and query.
func (s *Site) StartPath() string { return s.start.RequestURI() }

// Local reports whether the site is a folder served by the recorder.
func (s *Site) Local() bool { return s.root != nil }

// Resolve returns the URL of a path on the site ("/library/os.html").
func (s *Site) Resolve(p string) string {
	ref, err := url.Parse(p)
	if err != nil {
		return s.Start()
	}
	return s.base.ResolveReference(ref).String()
}

// inside returns the URL of href when it lies on the site (same scheme and
// host, under the base path).
func (s *Site) inside(href string) (*url.URL, bool) {
	u, err := url.Parse(href)
	if err != nil || u.Scheme != s.base.Scheme || u.Host != s.base.Host {
		return nil, false
	}
	if !strings.HasPrefix(u.Path, s.base.Path) && u.Path+"/" != s.base.Path {
		return nil, false
	}
	return u, true
}

// Exists reports whether href is on the site and answers: for a folder,
// a file or folder inside it; for a URL site, a HEAD request that returns
// 200 (answers are cached).
func (s *Site) Exists(href string) bool {
	u, ok := s.inside(href)
	if !ok {
		return false
	}
	if s.root != nil {
		_, ok := s.rel(u.Path)
		return ok
	}
	key := u.Path
	s.mu.Lock()
	v, hit := s.cache[key]
	s.mu.Unlock()
	if hit {
		return v
	}
	v = false
	u.Fragment = ""
	if resp, err := s.client.Head(u.String()); err == nil {
		resp.Body.Close()
		v = resp.StatusCode == http.StatusOK
	}
	s.mu.Lock()
	s.cache[key] = v
	s.mu.Unlock()
	return v
}

// Followable reports whether the policy may click a link to href: a page
// (see pageExts) on the site that exists.
func (s *Site) Followable(href string) bool {
	u, ok := s.inside(href)
	if !ok {
		return false
	}
	ext := strings.ToLower(path.Ext(u.Path))
	if ext != "" && !pageExts[ext] && !strings.HasSuffix(u.Path, "/") {
		return false
	}
	return s.Exists(href)
}

// Close stops the server of a folder site.
func (s *Site) Close() error {
	if s.root == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if cerr := s.root.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("record web: closing the site server: %w", err)
	}
	return nil
}
