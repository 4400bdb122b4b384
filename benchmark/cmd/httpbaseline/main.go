// Command httpbaseline serves the API of Shoal's HTTP front (GET, HEAD, PUT and DELETE
// /kv/{key}, POST /kv/{key}/incr, GET /healthz) with fasthttp or net/http over Shoal's
// own store.Store, so that beside `shoal --http-port` only the HTTP stack differs. It is
// the peer of benchmark/scripts/http-vs-fasthttp.sh; -engine nethttp-h2 serves HTTP/1.1
// and h2c with prior knowledge (net/http's own HTTP/2), the peer of
// benchmark/scripts/h2-vs-nethttp.sh.
//
//	go run ./benchmark/cmd/httpbaseline -engine fasthttp -addr 127.0.0.1:18080
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/shoalkv/shoal/store"
)

func main() {
	engine := flag.String("engine", "fasthttp", "fasthttp, nethttp or nethttp-h2")
	addr := flag.String("addr", "127.0.0.1:18080", "listen address")
	flag.Parse()
	st := store.New(store.Options{})
	var err error
	switch *engine {
	case "fasthttp":
		err = fasthttp.ListenAndServe(*addr, fastHandler(st))
	case "nethttp":
		err = http.ListenAndServe(*addr, netHandler(st))
	case "nethttp-h2":
		var p http.Protocols
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(true)
		srv := &http.Server{Addr: *addr, Handler: netHandler(st), Protocols: &p}
		err = srv.ListenAndServe()
	default:
		err = fmt.Errorf("-engine %q: want fasthttp, nethttp or nethttp-h2", *engine)
	}
	fmt.Fprintln(os.Stderr, "httpbaseline:", err)
	os.Exit(1)
}

// route splits a path into the decoded key and whether it is the incr route; ok is
// false for paths outside /kv/.
func route(rawPath string) (key []byte, incr, ok bool) {
	raw, found := strings.CutPrefix(rawPath, "/kv/")
	if !found {
		return nil, false, false
	}
	raw, incr = strings.CutSuffix(raw, "/incr")
	k, err := url.PathUnescape(raw)
	if err != nil {
		return nil, false, false
	}
	return []byte(k), incr, true
}

func fastHandler(st *store.Store) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		path := string(ctx.Path())
		if path == "/healthz" {
			ctx.SetBodyString("ok\n")
			return
		}
		key, incr, ok := route(string(ctx.URI().PathOriginal()))
		if !ok {
			ctx.Error("not found", http.StatusNotFound)
			return
		}
		method := string(ctx.Method())
		switch {
		case incr && method == "POST":
			by := int64(1)
			if v := ctx.QueryArgs().Peek("by"); v != nil {
				n, err := strconv.ParseInt(string(v), 10, 64)
				if err != nil {
					ctx.Error("invalid by", http.StatusBadRequest)
					return
				}
				by = n
			}
			n, err := st.IncrBy(key, by)
			if err != nil {
				ctx.Error(err.Error(), http.StatusConflict)
				return
			}
			ctx.SetBody(strconv.AppendInt(nil, n, 10))
		case method == "GET" || method == "HEAD":
			val, found, err := st.Get(ctx.Response.Body()[:0], key)
			switch {
			case err != nil:
				ctx.Error(err.Error(), http.StatusConflict)
			case !found:
				ctx.Error("no such key", http.StatusNotFound)
			default:
				ctx.SetContentType("application/octet-stream")
				ctx.Response.SetBodyRaw(val)
			}
		case method == "PUT":
			if _, _, _, err := st.Set(nil, key, ctx.PostBody(), store.SetOptions{}); err != nil {
				ctx.Error(err.Error(), http.StatusInsufficientStorage)
				return
			}
			ctx.SetStatusCode(http.StatusNoContent)
		case method == "DELETE":
			if st.Del([][]byte{key}) == 0 {
				ctx.Error("no such key", http.StatusNotFound)
				return
			}
			ctx.SetStatusCode(http.StatusNoContent)
		default:
			ctx.Error("method not allowed", http.StatusMethodNotAllowed)
		}
	}
}

func netHandler(st *store.Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			io.WriteString(w, "ok\n")
			return
		}
		key, incr, ok := route(r.URL.EscapedPath())
		if !ok {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		switch {
		case incr && r.Method == "POST":
			by := int64(1)
			if v := r.URL.Query().Get("by"); v != "" {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					http.Error(w, "invalid by", http.StatusBadRequest)
					return
				}
				by = n
			}
			n, err := st.IncrBy(key, by)
			if err != nil {
				http.Error(w, err.Error(), http.StatusConflict)
				return
			}
			io.WriteString(w, strconv.FormatInt(n, 10))
		case r.Method == "GET" || r.Method == "HEAD":
			val, found, err := st.Get(nil, key)
			switch {
			case err != nil:
				http.Error(w, err.Error(), http.StatusConflict)
			case !found:
				http.Error(w, "no such key", http.StatusNotFound)
			default:
				w.Header().Set("Content-Type", "application/octet-stream")
				w.Header().Set("Content-Length", strconv.Itoa(len(val)))
				w.Write(val)
			}
		case r.Method == "PUT":
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if _, _, _, err := st.Set(nil, key, body, store.SetOptions{}); err != nil {
				http.Error(w, err.Error(), http.StatusInsufficientStorage)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		case r.Method == "DELETE":
			if st.Del([][]byte{key}) == 0 {
				http.Error(w, "no such key", http.StatusNotFound)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		default:
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	})
}

func init() { log.SetFlags(0) }
