// Command epollfloor is not an MCP server either (see ../floor): it is the
// least a server on its own epoll loop must do to satisfy the load client
// in the echo, ask and connect scenarios, with none of MCP's rules and no
// robustness (writes spin on a full socket). It was the experiment that
// showed what an event loop could save over fasthttp before LoopServer was
// written; see "Where the CPU goes" in ../README.md.
//
//	go build -o bin/epollfloor ./epollfloor
//	SERVERS="mcpgo floor epoll ours" CMD_epoll="$PWD/bin/epollfloor -loops 1 -hyb -listen {addr}" ... ./run-peers.sh
//
// -loops is the number of event loops (each its own epoll set and
// goroutine); -hyb runs tools/call on a new goroutine, as an MCP server
// must (a tool may block), and everything else on the loop; -go runs every
// request on a new goroutine; -lock locks each loop to its OS thread.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/mcp-actors/mcp-actors/bench/internal/floorwire"
)

type conn struct {
	fd  int
	in  []byte
	mu  sync.Mutex
	get bool
}

type waiter struct {
	c  *conn
	id string
}

type loop struct {
	ep    int
	conns map[int]*conn
}

var (
	ids     atomic.Int64
	waiting sync.Map
	loops   []*loop
	next    atomic.Int64
	goh     = flag.Bool("go", false, "handlers on goroutines")
	hyb     = flag.Bool("hyb", false, "tools/call on goroutines")
	lock    = flag.Bool("lock", false, "lock OS threads")
)

func main() {
	addr := flag.String("listen", "127.0.0.1:18710", "")
	n := flag.Int("loops", runtime.GOMAXPROCS(0), "")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		panic(err)
	}
	f, _ := ln.(*net.TCPListener).File()
	lfd := int(f.Fd())
	syscall.SetNonblock(lfd, true)
	for i := 0; i < *n; i++ {
		ep, _ := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		l := &loop{ep: ep, conns: map[int]*conn{}}
		loops = append(loops, l)
	}
	syscall.EpollCtl(loops[0].ep, syscall.EPOLL_CTL_ADD, lfd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(lfd)})
	for _, l := range loops {
		go l.run(lfd)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	<-stop
}

func (l *loop) run(lfd int) {
	if *lock {
		runtime.LockOSThread()
	}
	evs := make([]syscall.EpollEvent, 128)
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.EpollWait(l.ep, evs, -1)
		if err != nil {
			continue
		}
		for i := 0; i < n; i++ {
			fd := int(evs[i].Fd)
			if fd == lfd {
				for {
					nfd, _, err := syscall.Accept4(lfd, syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC)
					if err != nil {
						break
					}
					syscall.SetsockoptInt(nfd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
					t := loops[int(next.Add(1))%len(loops)]
					c := &conn{fd: nfd}
					if t == l {
						l.conns[nfd] = c
					} else {
						// hand over: register in target loop's epoll; map is owned by... keep simple: shared via sync
						regMu.Lock()
						pending[nfd] = c
						regMu.Unlock()
					}
					syscall.EpollCtl(t.ep, syscall.EPOLL_CTL_ADD, nfd, &syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | (1 << 31), Fd: int32(nfd)})
				}
				continue
			}
			c := l.conns[fd]
			if c == nil {
				regMu.Lock()
				c = pending[fd]
				delete(pending, fd)
				regMu.Unlock()
				if c == nil {
					continue
				}
				l.conns[fd] = c
			}
			closed := false
			for {
				m, err := syscall.Read(fd, buf)
				if m > 0 {
					c.in = append(c.in, buf[:m]...)
					if m < len(buf) {
						break
					}
					continue
				}
				if err == syscall.EAGAIN {
					break
				}
				closed = true
				break
			}
			if closed {
				delete(l.conns, fd)
				syscall.Close(fd)
				continue
			}
			for c.serveOne() {
			}
		}
	}
}

var (
	regMu   sync.Mutex
	pending = map[int]*conn{}
)

func (c *conn) write(b []byte) {
	c.mu.Lock()
	for len(b) > 0 {
		n, err := syscall.Write(c.fd, b)
		if n > 0 {
			b = b[n:]
		}
		if err == syscall.EAGAIN {
			runtime.Gosched()
			continue
		}
		if err != nil {
			break
		}
	}
	c.mu.Unlock()
}

var crlf2 = []byte("\r\n\r\n")

func (c *conn) serveOne() bool {
	if c.get {
		c.in = c.in[:0]
		return false
	}
	h := bytes.Index(c.in, crlf2)
	if h < 0 {
		return false
	}
	head := c.in[:h]
	sp := bytes.IndexByte(head, ' ')
	method := string(head[:sp])
	cl := 0
	lines := head
	for len(lines) > 0 {
		e := bytes.Index(lines, []byte("\r\n"))
		var line []byte
		if e < 0 {
			line, lines = lines, nil
		} else {
			line, lines = lines[:e], lines[e+2:]
		}
		if len(line) > 15 && (line[0] == 'C' || line[0] == 'c') && bytes.EqualFold(line[:15], []byte("content-length:")) {
			cl, _ = strconv.Atoi(string(bytes.TrimSpace(line[15:])))
		}
	}
	if len(c.in) < h+4+cl {
		return false
	}
	body := c.in[h+4 : h+4+cl]
	if *goh || (*hyb && bytes.Contains(body, []byte(`"tools/call"`))) {
		b := append([]byte(nil), body...)
		go c.handle(method, b)
	} else {
		c.handle(method, body)
	}
	rest := copy(c.in, c.in[h+4+cl:])
	c.in = c.in[:rest]
	return rest > 0
}

func (c *conn) reply(status string, ctype string, hdr string, body string) {
	s := "HTTP/1.1 " + status + "\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"
	if ctype != "" {
		s += "Content-Type: " + ctype + "\r\n"
	}
	s += hdr + "\r\n" + body
	c.write([]byte(s))
}

func (c *conn) handle(method string, body []byte) {
	switch method {
	case "GET":
		c.get = true
		c.write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\r\n"))
		return
	case "DELETE":
		c.reply("204 No Content", "", "", "")
		return
	}
	var m floorwire.Message
	_ = json.Unmarshal(body, &m)
	switch {
	case m.Result != nil:
		c.reply("202 Accepted", "", "", "")
		if w, ok := waiting.LoadAndDelete(string(m.ID)); ok {
			wt := w.(waiter)
			var r struct {
				Action  string          `json:"action"`
				Content json.RawMessage `json:"content"`
			}
			_ = json.Unmarshal(m.Result, &r)
			t, _ := json.Marshal("User response: action=" + r.Action + ", content=" + string(r.Content))
			ev := "event: message\ndata: " + `{"jsonrpc":"2.0","id":` + wt.id + `,"result":{"content":[{"type":"text","text":` + string(t) + "}]}}\n\n"
			wt.c.write([]byte(strconv.FormatInt(int64(len(ev)), 16) + "\r\n" + ev + "\r\n0\r\n\r\n"))
		}
		return
	case m.ID == nil:
		c.reply("202 Accepted", "", "", "")
		return
	case m.Method == "tools/call" && m.Params.Name == "test_elicitation":
		eid := `"e` + strconv.FormatInt(ids.Add(1), 10) + `"`
		waiting.Store(eid, waiter{c, string(m.ID)})
		q, _ := json.Marshal(m.Params.Arguments.Message)
		ev := `event: message` + "\ndata: " + `{"jsonrpc":"2.0","id":` + eid +
			`,"method":"elicitation/create","params":{"mode":"form","message":` + string(q) + `,"requestedSchema":` + floorwire.ElicitSchema + "}}\n\n"
		c.write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" + strconv.FormatInt(int64(len(ev)), 16) + "\r\n" + ev + "\r\n"))
		return
	}
	id := string(m.ID)
	switch m.Method {
	case "initialize":
		c.reply("200 OK", "application/json", "Mcp-Session-Id: "+strconv.FormatInt(ids.Add(1), 10)+"\r\n", `{"jsonrpc":"2.0","id":`+id+`,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"floor","version":"1"}}}`)
	case "tools/call":
		t, _ := json.Marshal(m.Params.Arguments.Text)
		c.reply("200 OK", "application/json", "", `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":`+string(t)+`}]}}`)
	default:
		c.reply("200 OK", "application/json", "", `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`)
	}
}
