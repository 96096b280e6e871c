package transport_test

import (
	"bufio"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/messages"
)

// TestHTTPServerTimeouts pins what NewHTTPServer sets: a header deadline
// (slow loris), an idle limit and a header size limit, and no overall write
// timeout, which would cut long SSE streams.
func TestHTTPServerTimeouts(t *testing.T) {
	hs := transport.NewHTTPServer(http.NotFoundHandler(), nil)
	assert.Equal(t, 10*time.Second, hs.ReadHeaderTimeout)
	assert.Positive(t, hs.IdleTimeout)
	assert.Equal(t, 64<<10, hs.MaxHeaderBytes)
	assert.Zero(t, hs.WriteTimeout, "a write timeout would end every SSE stream")
	assert.Zero(t, hs.ReadTimeout, "a read timeout would end every SSE stream")
	assert.NotNil(t, hs.ErrorLog)
}

// TestHTTPSlowLoris checks that a client sending its request headers one
// byte at a time is cut off at ReadHeaderTimeout while other clients are
// served. The server is NewHTTPServer's with a 300 ms header deadline
// instead of 10 s, to keep the test short.
func TestHTTPSlowLoris(t *testing.T) {
	const headerTimeout = 300 * time.Millisecond
	f := newHTTPFixture(t, &httpSetup{
		Configure: func(hs *http.Server) { hs.ReadHeaderTimeout = headerTimeout }, // std
		HTTP:      transport.HTTPOptions{ReadTimeout: headerTimeout},              // fast
	})

	conn, err := net.Dial("tcp", f.addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	request := "POST /mcp HTTP/1.1\r\nHost: " + f.addr + "\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nX-Padding: " + fmt.Sprintf("%0100d", 0) + "\r\n\r\n"

	start := time.Now()
	stop := make(chan struct{})
	var sent atomic.Int64
	writing := make(chan struct{})
	go func() { // one byte per 100 ms until the server hangs up
		defer close(writing)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := range len(request) {
			select {
			case <-tick.C:
			case <-stop:
				return
			}
			if _, err := conn.Write([]byte{request[i]}); err != nil {
				return
			}
			sent.Add(1)
		}
	}()
	cut := make(chan time.Duration, 1)
	go func() {
		_, _ = io.Copy(io.Discard, conn) // returns when the server closes the connection
		cut <- time.Since(start)
	}()

	// Others are served meanwhile.
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	assert.Nil(t, c.call(messages.MethodPing, nil).Error)

	after := recv(t, cut, "the server to cut the slow client off")
	close(stop)
	recv(t, writing, "the slow writer to stop")
	// The server's clock starts as it accepts, a little before ours.
	assert.Greater(t, after, headerTimeout/2, "cut off long before the header deadline")
	assert.Less(t, after, watchdog/2, "cut off long after the header deadline")
	assert.Less(t, int(sent.Load()), len(request), "the slow client got to send its whole request")
	t.Logf("cut off after %v, %d of %d header bytes", after.Round(time.Millisecond), sent.Load(), len(request))
}

// raiseNoFile raises RLIMIT_NOFILE to at least n for the test, or skips it.
func raiseNoFile(t *testing.T, n uint64) {
	t.Helper()
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	if lim.Cur >= n {
		return
	}
	raised := lim
	raised.Cur = n
	if raised.Max < n {
		raised.Max = n
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
		t.Skipf("needs %d file descriptors; RLIMIT_NOFILE is %d (hard %d) and cannot be raised: %v", n, lim.Cur, lim.Max, err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) })
}

// Connection storm parameters.
const (
	stormConns       = 10000
	stormDialers     = 500
	stormMaxSessions = 1000
	stormBound       = 60 * time.Second
	// stormEnv names the server address for the helper process.
	stormEnv = "MCP_ACTORS_TEST_HTTP_STORM_ADDR"
	// stormResult prefixes the helper's report on its stdout.
	stormResult = "HTTP-STORM-RESULT "
)

// stormReport is what the helper process found.
type stormReport struct {
	Opened   int      // connections opened (and kept open)
	OK       int      // answered 200 with a session
	Busy     int      // answered 503 with Retry-After
	Failures []string // the first few other outcomes
	Elapsed  int64    // until every connection was answered, in ns (v2 gives a Duration no JSON form)
}

// TestHTTPTenThousandConnects opens 10,000 TCP connections to one server,
// each sending an initialize POST (500 dialers at a time), and keeps them
// all open. Every one gets a valid answer within a bounded time — 200 with
// a session, or 503 with Retry-After past MaxSessions — while another
// session's echo calls are answered throughout.
//
// The client ends of the connections live in a helper process (this test
// binary running TestHTTPStormClient): a process may hold RLIMIT_NOFILE
// descriptors, and the usual 20,000 do not fit both ends of 10,000
// connections.
func TestHTTPTenThousandConnects(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 10,000 connections")
	}
	raiseNoFile(t, stormConns+4096)
	f := newHTTPFixture(t, &httpSetup{Server: mcpactors.Options{MaxSessions: stormMaxSessions}})
	echo := f.client(t)
	echo.initialize(messages.LatestVersion, messages.ClientCapabilities{})

	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^TestHTTPStormClient$", "-test.count=1")
	cmd.Env = append(os.Environ(), stormEnv+"="+f.addr)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	reports := make(chan stormReport, 1)
	var output strings.Builder // the helper's other output, for diagnostics
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), stormResult); ok {
				var r stormReport
				if json.Unmarshal([]byte(rest), &r) == nil {
					reports <- r
				}
				continue
			}
			output.WriteString(sc.Text() + "\n")
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		stdin.Close() // the helper closes its connections and exits
		select {
		case <-exited:
		case <-time.After(watchdog):
			_ = cmd.Process.Kill()
			<-exited
		}
	})

	// Another session is served throughout.
	echoes, slowest := 0, time.Duration(0)
	call := func() {
		t.Helper()
		began := time.Now()
		res := echo.callTool("test_echo", map[string]any{"text": strconv.Itoa(echoes)})
		slowest = max(slowest, time.Since(began))
		require.Len(t, res.Content, 1)
		assert.Equal(t, strconv.Itoa(echoes), res.Content[0].(*messages.TextContent).Text)
		echoes++
	}
	timeout := time.NewTimer(stormBound + watchdog)
	defer timeout.Stop()
	var report stormReport
storm:
	for {
		select {
		case report = <-reports:
			break storm
		case err := <-exited:
			require.FailNowf(t, "the helper process ended without a report", "%v\n%s%s", err, output.String(), stderr.String())
		case <-timeout.C:
			require.FailNow(t, "the connections were not all answered in time")
		default:
		}
		call()
	}
	call() // with all 10,000 connections open

	assert.Empty(t, report.Failures)
	assert.Equal(t, stormConns, report.Opened, "every connection was opened")
	assert.Equal(t, stormConns, report.OK+report.Busy, "every connection got a valid answer")
	assert.Positive(t, report.OK)
	assert.Positive(t, report.Busy, "MaxSessions refused the rest")
	assert.Less(t, time.Duration(report.Elapsed), stormBound)
	assert.Greater(t, echoes, 1, "the echo session was served during the storm")
	t.Logf("%d connections answered in %v: %d sessions, %d refused with 503; %d echo calls meanwhile, the slowest %v; %d live sessions",
		stormConns, time.Duration(report.Elapsed).Round(time.Millisecond), report.OK, report.Busy, echoes, slowest.Round(time.Millisecond), f.srv.LiveSessions())
}

// TestHTTPStormClient is TestHTTPTenThousandConnects' helper process: it
// opens the connections, sends the initialize requests, checks the answers,
// prints its report, and keeps the connections open until its stdin closes.
func TestHTTPStormClient(t *testing.T) {
	addr := os.Getenv(stormEnv)
	if addr == "" {
		t.Skip("the helper process of TestHTTPTenThousandConnects")
	}
	raiseNoFile(t, stormConns+1024)
	body, err := messages.EncodeRequest(messages.IntID(1), messages.MethodInitialize, initParams(messages.LatestVersion, messages.ClientCapabilities{}))
	require.NoError(t, err)
	request := []byte("POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + string(body))

	var (
		next     atomic.Int64
		ok, busy atomic.Int64
		mu       sync.Mutex
		open     []net.Conn
		failures []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	deadline := time.Now().Add(stormBound)
	connect := func(i int) {
		conn, err := net.DialTimeout("tcp", addr, time.Until(deadline))
		if err != nil {
			fail("connection %d: dial: %v", i, err)
			return
		}
		mu.Lock()
		open = append(open, conn) // kept open until the parent is done
		mu.Unlock()
		_ = conn.SetDeadline(deadline)
		if _, err := conn.Write(request); err != nil {
			fail("connection %d: write: %v", i, err)
			return
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			fail("connection %d: read: %v", i, err)
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			fail("connection %d: body: %v", i, err)
			return
		}
		var msg struct {
			ID     jsontext.Value `json:"id"`
			Result *struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"result"`
			Error *struct {
				Code int64 `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(b, &msg); err != nil {
			fail("connection %d: %d with a body that is not JSON: %q", i, resp.StatusCode, b)
			return
		}
		switch {
		case resp.StatusCode == http.StatusOK && msg.Result != nil && msg.Result.ProtocolVersion == messages.LatestVersion &&
			resp.Header.Get(transport.HeaderSessionID) != "" && string(msg.ID) == "1":
			ok.Add(1)
		case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get(headerRetry) != "" && msg.Error != nil:
			busy.Add(1)
		default:
			fail("connection %d: unexpected answer %d %q", i, resp.StatusCode, b)
		}
	}

	start := time.Now()
	var wg sync.WaitGroup
	for range stormDialers {
		wg.Go(func() {
			for {
				i := int(next.Add(1))
				if i > stormConns {
					return
				}
				connect(i)
			}
		})
	}
	wg.Wait()
	mu.Lock()
	report, err := json.Marshal(stormReport{Opened: len(open), OK: int(ok.Load()), Busy: int(busy.Load()), Failures: failures, Elapsed: int64(time.Since(start))})
	mu.Unlock()
	require.NoError(t, err)
	fmt.Println(stormResult + string(report))
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent is done with the connections
}
