// Command etcd runs a single-member etcd server for the end-to-end tests: go.etcd.io/etcd/server/v3/embed at
// the version k8s.io/kubernetes pins, so the API server talks to the etcd it is tested against upstream.
//
// Usage: etcd -data-dir DIR -listen-client URL -listen-peer URL
// It prints "etcd ready" once the server serves clients and stops on SIGTERM or SIGINT.
package main

import (
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func mustURL(s string) url.URL {
	u, err := url.Parse(s)
	if err != nil {
		log.Fatalf("etcd: bad URL %q: %v", s, err)
	}
	return *u
}

func main() {
	dataDir := flag.String("data-dir", "", "directory for etcd's data (required)")
	client := flag.String("listen-client", "http://127.0.0.1:2379", "client URL")
	peer := flag.String("listen-peer", "http://127.0.0.1:2380", "peer URL")
	flag.Parse()
	if *dataDir == "" {
		log.Fatal("etcd: -data-dir is required")
	}

	cfg := embed.NewConfig()
	cfg.Name = "e2e"
	cfg.Dir = *dataDir
	cfg.LogLevel = "error"
	cfg.ListenClientUrls = []url.URL{mustURL(*client)}
	cfg.AdvertiseClientUrls = cfg.ListenClientUrls
	cfg.ListenPeerUrls = []url.URL{mustURL(*peer)}
	cfg.AdvertisePeerUrls = cfg.ListenPeerUrls
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// A test cluster lives for seconds: no fsync on every write.
	cfg.UnsafeNoFsync = true

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		log.Fatalf("etcd: %v", err)
	}
	defer e.Close()

	select {
	case <-e.Server.ReadyNotify():
		fmt.Println("etcd ready")
	case <-time.After(60 * time.Second):
		e.Server.Stop()
		log.Fatal("etcd: not ready after 60s")
	}

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case err := <-e.Err():
		log.Fatalf("etcd: %v", err)
	case <-stop:
	}
}
