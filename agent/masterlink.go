package agent

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/internal/tlsconf"
)

// masterLoop keeps one registration stream open to the leading master. It
// tries the --master addresses in turn; a master that is not the leader
// answers 307 naming the leader, which is followed at once (a few hops at
// most, so two masters with stale views cannot bounce the agent forever).
// The seed list itself never changes: after a failover the old leader's
// address may be dead, and any seed can name the new one. Backoff grows
// while no master accepts the agent and resets once one does.
func (a *Agent) masterLoop() {
	const minBackoff, maxBackoff = 100 * time.Millisecond, 2 * time.Second
	backoff := minBackoff
	i := 0
	addr := a.cfg.Masters[0]
	hops := 0
	for {
		select {
		case <-a.stop:
			return
		default:
		}
		err := a.registerAndServe(addr)
		a.mu.Lock()
		wasConnected := a.connected
		a.connected = false
		a.mu.Unlock()
		select {
		case <-a.stop:
			return // stopping: the connection ended because we ended it
		default:
		}
		if wasConnected {
			backoff = minBackoff
		}
		var re *redirectError
		if errors.As(err, &re) && hops < 3 && re.to != "" {
			a.log.Info().Str("master", addr).Str("leader", re.to).Msg("following redirect to the leading master")
			addr = re.to
			hops++
			continue
		}
		if err != nil {
			a.log.Warn().Err(err).Str("master", addr).Dur("retry_in", backoff).Msg("master connection ended")
		}
		hops = 0
		i++ // the next seed; the leader we had may be gone
		addr = a.cfg.Masters[i%len(a.cfg.Masters)]
		select {
		case <-a.stop:
			return
		case <-a.clock().After(backoff):
		}
		if backoff < maxBackoff {
			backoff *= 2
		}
	}
}

type redirectError struct{ to string }

func (e *redirectError) Error() string { return "redirected to " + e.to }

// registerAndServe registers with the master at addr and handles the
// events it streams back until the stream ends, the master falls silent
// or the agent stops.
func (a *Agent) registerAndServe(addr string) error {
	a.mu.Lock()
	call := &api.AgentCall{Type: api.AgentCallType_REGISTER, AgentId: a.id, Agent: &api.AgentRecord{
		Id: a.id, Hostname: a.cfg.Hostname, Address: a.addr, Resources: a.static, Attributes: a.cfg.Attributes,
		Isolation: a.iso.kind()}}
	call.Tasks = a.taskRecordsLocked()
	call.CheckpointedResources = encodeResources(a.checkpointed)
	a.mu.Unlock()
	body, _ := proto.Marshal(call)
	ctx, cancel := a.stopContext()
	defer cancel()
	resp, err := a.postRegister(ctx, addr, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return a.serveMaster(ctx, cancel, addr, resp.Body)
}

// postRegister posts REGISTER to the master at addr and returns the
// answer that opens its event stream. Any other answer is an error: a
// redirect to the leader (redirectError), a removal (removedByMaster) or a
// refusal.
func (a *Agent) postRegister(ctx context.Context, addr string, body []byte) (*http.Response, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, a.masterURL(addr, "/api/v1/allot/agent"), bytes.NewReader(body))
	req.Header.Set("Content-Type", api.MediaProtobuf)
	req.Header.Set("Accept", api.MediaProtobuf)
	a.presentCredential(req)
	resp, err := (&http.Client{Transport: a.mc.Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		return nil, tlsconf.Explain(err, "master at "+addr)
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusTemporaryRedirect {
		loc := strings.TrimPrefix(resp.Header.Get("Location"), "//")
		if i := strings.Index(loc, "/"); i >= 0 {
			loc = loc[:i]
		}
		return nil, &redirectError{to: loc}
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if tlsconf.IsPlaintextRefusal(resp.StatusCode, msg) {
		return nil, tlsconf.Refused("master at " + addr)
	}
	if resp.StatusCode == http.StatusGone {
		return nil, a.removedByMaster(strings.TrimSpace(string(msg)))
	}
	return nil, fmt.Errorf("REGISTER answered %s: %s%s", resp.Status, strings.TrimSpace(string(msg)), a.registerRefused(resp.StatusCode))
}

// serveMaster reads the master's event stream and handles each event
// until the stream fails. A watchdog cancels ctx when the master falls
// silent: it pings every few seconds, and silence means it is gone.
func (a *Agent) serveMaster(ctx context.Context, cancel context.CancelFunc, addr string, stream io.Reader) error {
	alive := make(chan struct{}, 1)
	ping := 5 * time.Second
	clock := a.clock()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-alive: // a fresh wait of three pings
			case <-clock.After(3 * ping):
				a.log.Warn().Msg("no word from the master; reconnecting")
				cancel()
				return
			}
		}
	}()
	br := bufio.NewReaderSize(stream, 64<<10)
	for {
		frame, err := readFrame(br)
		if err != nil {
			return err
		}
		select {
		case alive <- struct{}{}:
		default:
		}
		var ev api.AgentEvent
		if err := proto.Unmarshal(frame, &ev); err != nil {
			return fmt.Errorf("bad event from master: %w", err)
		}
		if ev.Type == api.AgentEventType_REGISTERED {
			a.registered(addr, ev.AgentId)
			continue
		}
		a.handleEvent(&ev)
	}
}

func readFrame(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || n < 0 || n > api.MaxBodyBytes*4 {
		return nil, fmt.Errorf("bad RecordIO length %q", line)
	}
	// Read the payload as it arrives rather than allocating n bytes up
	// front: a length line alone must not cost up to 64 MiB (found by
	// FuzzReadFrame).
	var buf bytes.Buffer
	if _, err := io.CopyN(&buf, br, int64(n)); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf.Bytes(), nil
}

func (a *Agent) registered(master, id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.id != id {
		a.id = id
		writeFileAtomic(filepath.Join(a.cfg.WorkDir, "meta", "agent_id"), []byte(id))
	}
	a.connected, a.master = true, master
	// Resend the head update of every task at once; the master lost what was
	// in flight.
	for _, ex := range a.executors {
		for _, t := range ex.tasks {
			if len(t.pending) > 0 {
				t.nextRetry = time.Time{}
			}
		}
	}
	a.log.Info().Str("agent_id", id).Str("master", master).Msg("registered with master")
}

// sender posts calls to the master. Several run so that one slow call does
// not hold up the rest; ordering per task is kept by sending only the head
// of each task's update queue.
func (a *Agent) sender() {
	for {
		select {
		case <-a.stop:
			return
		case call := <-a.sendq:
			// Take whatever else is queued too and send it as one batch.
			if n := len(a.sendq); n > 0 {
				if n > 1024 {
					n = 1024
				}
				batch := &api.AgentCall{Type: api.AgentCallType_AGENT_BATCH, Batch: []*api.AgentCall{call}}
				for i := 0; i < n; i++ {
					select {
					case c := <-a.sendq:
						batch.Batch = append(batch.Batch, c)
					default:
					}
				}
				call = batch
			}
			a.mu.Lock()
			master, ok := a.master, a.connected
			call.AgentId = a.id
			a.mu.Unlock()
			if !ok {
				continue // updates are retried after re-registration
			}
			body, _ := proto.Marshal(call)
			req, _ := http.NewRequest(http.MethodPost, a.masterURL(master, "/api/v1/allot/agent"), bytes.NewReader(body))
			req.Header.Set("Content-Type", api.MediaProtobuf)
			a.presentCredential(req)
			resp, err := a.mc.Do(req)
			if err != nil {
				a.log.Debug().Err(err).Msg("call to master failed")
				continue
			}
			if resp.StatusCode != http.StatusAccepted {
				msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
				a.log.Warn().Str("status", resp.Status).Str("msg", strings.TrimSpace(string(msg))).Str("call", call.Type.String()).Msg("master refused call")
			} else {
				a.lastSent.Store(time.Now().UnixNano())
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
}

func (a *Agent) send(call *api.AgentCall) {
	select {
	case a.sendq <- call:
	default:
		a.log.Warn().Str("call", call.Type.String()).Msg("send queue full; dropping (updates are retried)")
	}
}

// stopContext is a context that ends when the agent stops or when its
// cancel is called, for calls that must not outlive the agent.
func (a *Agent) stopContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-a.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
