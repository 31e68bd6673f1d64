package exampleutil

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/allot-sched/allot/framework"
	"github.com/allot-sched/allot/framework/elastic"
)

func TestElasticFlags(t *testing.T) {
	cases := []struct {
		args    []string
		dynamic bool
		scaling elastic.Policy
		epoch   time.Duration
		err     bool
	}{
		{args: nil},
		{args: []string{"--elastic", "dynamic"}, dynamic: true},
		{args: []string{"--elastic", "ispark"}, dynamic: true, epoch: 5 * time.Second,
			scaling: elastic.ISpark{Gamma: 0.5, H: 1.1, Theta: 1}},
		{args: []string{"--elastic", "cf", "--ispark-gamma", "0.3", "--ispark-h", "1.2", "--monitor-epoch", "2s"}, dynamic: true, epoch: 2 * time.Second,
			scaling: elastic.ISpark{Gamma: 0.3, H: 1.2, Theta: 1, CPUOnly: true}},
		{args: []string{"--elastic", "spark"}, err: true},
	}
	for _, tc := range cases {
		var f ElasticFlags
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		f.Register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		var cfg framework.Config
		err := f.apply(&cfg)
		if (err != nil) != tc.err {
			t.Fatalf("%v: error %v", tc.args, err)
		}
		if err != nil {
			continue
		}
		if cfg.Dynamic != tc.dynamic || cfg.MonitorEpoch != tc.epoch || cfg.Scaling != tc.scaling {
			t.Errorf("%v: dynamic %v epoch %v scaling %#v", tc.args, cfg.Dynamic, cfg.MonitorEpoch, cfg.Scaling)
		}
	}
}

func TestOthersWaitingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "waiting")
	f := ElasticFlags{OthersWaitingFile: path}
	var cfg framework.Config
	if err := f.apply(&cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.OthersWaiting() {
		t.Fatal("others wait before the file exists")
	}
	os.WriteFile(path, nil, 0o644)
	if !cfg.OthersWaiting() {
		t.Fatal("others do not wait once the file exists")
	}
}
