// The hub's side of Liqo for the end-to-end tests: Liqo v1.2.0's own EndpointSlice reflection (the code of a hub's
// virtual kubelet that writes ShadowEndpointSlices into a leaf), started as the virtual kubelet starts it
// (pkg/virtualKubelet/provider/provider.go NewLiqoProvider, cmd/virtual-kubelet/root/root.go runRootCommand): forge.Init
// with the two cluster IDs, a reflection manager holding exposition.NewEndpointSliceReflector and the NamespaceMap
// handler, and Liqo's leader election on a Lease of the hub, since that reflector works only while elected
// (generic.ConcurrencyModeLeader, reflection/generic/reflector.go line 223). Nothing of it is reimplemented here: the
// leaf sees exactly the writes a hub makes, and the hub's objects it reads (EndpointSlices, Services, Nodes, IPs, the
// NamespaceMap) are the tests' to write.
//
//	hub-reflector --local-kubeconfig HUB --remote-kubeconfig LEAF --local-cluster-id ID --remote-cluster-id ID
//	              --local-podcidr CIDR[,CIDR] [--tenant-namespace NS] [--node-name NAME] [--workers N] [-v 4]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	corev1clients "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	liqov1beta1 "github.com/liqotech/liqo/apis/core/v1beta1"
	offloadingv1beta1 "github.com/liqotech/liqo/apis/offloading/v1beta1"
	liqoclient "github.com/liqotech/liqo/pkg/client/clientset/versioned"
	"github.com/liqotech/liqo/pkg/leaderelection"
	"github.com/liqotech/liqo/pkg/virtualKubelet/forge"
	"github.com/liqotech/liqo/pkg/virtualKubelet/reflection/exposition"
	"github.com/liqotech/liqo/pkg/virtualKubelet/reflection/manager"
	"github.com/liqotech/liqo/pkg/virtualKubelet/reflection/namespacemap"
)

// The virtual kubelet's name for its Lease (cmd/virtual-kubelet/root/root.go line 67).
const leaderElectorName = "virtual-kubelet-leader-election"

type options struct {
	localKubeconfig, remoteKubeconfig string
	localCluster, remoteCluster       string
	tenantNamespace, nodeName         string
	localPodCIDRs                     string
	workers                           uint
	resync                            time.Duration
	leaseDuration, renewDeadline      time.Duration
	retryPeriod                       time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.localKubeconfig, "local-kubeconfig", "", "the hub's kubeconfig (where the EndpointSlices are)")
	flag.StringVar(&o.remoteKubeconfig, "remote-kubeconfig", "", "the leaf's kubeconfig (where the shadows are written)")
	flag.StringVar(&o.localCluster, "local-cluster-id", "", "the hub's cluster ID")
	flag.StringVar(&o.remoteCluster, "remote-cluster-id", "", "the leaf's cluster ID")
	flag.StringVar(&o.tenantNamespace, "tenant-namespace", "", "the hub's tenant namespace for the leaf (default liqo-tenant-<remote>)")
	flag.StringVar(&o.nodeName, "node-name", "", "the virtual node's name (default liqo-<remote>)")
	flag.StringVar(&o.localPodCIDRs, "local-podcidr", "", "the hub's pod CIDRs, comma-separated (the virtual kubelet's --local-podcidr)")
	// The virtual kubelet's defaults (cmd/virtual-kubelet/root/opts.go lines 43, 53, 160-162).
	flag.UintVar(&o.workers, "workers", 10, "EndpointSlice reflection workers")
	flag.DurationVar(&o.resync, "resync-period", 10*time.Hour, "informer resync period")
	flag.DurationVar(&o.leaseDuration, "lease-duration", 15*time.Second, "leader election lease duration")
	flag.DurationVar(&o.renewDeadline, "lease-renew-deadline", 10*time.Second, "leader election renew deadline")
	flag.DurationVar(&o.retryPeriod, "lease-retry-period", 5*time.Second, "leader election retry period")
	klog.InitFlags(flag.CommandLine)
	flag.Parse()
	if err := run(&o); err != nil {
		fmt.Fprintf(os.Stderr, "hub-reflector: %v\n", err)
		os.Exit(1)
	}
}

func run(o *options) error {
	if o.localKubeconfig == "" || o.remoteKubeconfig == "" || o.localCluster == "" || o.remoteCluster == "" || o.localPodCIDRs == "" {
		return errors.New("--local-kubeconfig, --remote-kubeconfig, --local-cluster-id, --remote-cluster-id and --local-podcidr are required")
	}
	if o.tenantNamespace == "" {
		o.tenantNamespace = "liqo-tenant-" + o.remoteCluster
	}
	if o.nodeName == "" {
		o.nodeName = "liqo-" + o.remoteCluster
	}
	localConfig, err := clientcmd.BuildConfigFromFlags("", o.localKubeconfig)
	if err != nil {
		return fmt.Errorf("hub kubeconfig: %w", err)
	}
	remoteConfig, err := clientcmd.BuildConfigFromFlags("", o.remoteKubeconfig)
	if err != nil {
		return fmt.Errorf("leaf kubeconfig: %w", err)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()

	// As NewLiqoProvider does: the forging globals first (origin and destination labels, the endpoints' nodeName).
	forge.Init(liqov1beta1.ClusterID(o.localCluster), liqov1beta1.ClusterID(o.remoteCluster), o.nodeName, "127.0.0.1")
	localClient := kubernetes.NewForConfigOrDie(localConfig)
	localLiqoClient := liqoclient.NewForConfigOrDie(localConfig)
	remoteClient := kubernetes.NewForConfigOrDie(remoteConfig)
	remoteLiqoClient := liqoclient.NewForConfigOrDie(remoteConfig)
	// The hub's events are recorded on the hub, as the virtual kubelet records them (root.go lines 104-105).
	eb := record.NewBroadcaster()
	eb.StartRecordingToSink(&corev1clients.EventSinkImpl{Interface: localClient.CoreV1().Events("")})
	defer eb.Shutdown()

	forgingOpts := forge.NewForgingOpts(nil)
	reflectorConfig := &offloadingv1beta1.ReflectorConfig{NumWorkers: o.workers, Type: offloadingv1beta1.DenyList}
	reflectionManager := manager.New(localClient, remoteClient, localLiqoClient, remoteLiqoClient, o.resync, eb, &forgingOpts).
		With(exposition.NewEndpointSliceReflector(strings.Split(o.localPodCIDRs, ","), reflectorConfig)).
		WithNamespaceHandler(namespacemap.NewHandler(localLiqoClient, o.tenantNamespace, o.resync))
	reflectionManager.Start(ctx)

	// As root.go lines 219-249: the leader resyncs the reflectors once elected (items seen before were skipped).
	elector, err := leaderelection.Init(&leaderelection.Opts{
		PodInfo:           leaderelection.PodInfo{PodName: "hub-reflector-" + o.remoteCluster, Namespace: o.tenantNamespace},
		LeaderElectorName: leaderElectorName,
		LeaseDuration:     o.leaseDuration,
		RenewDeadline:     o.renewDeadline,
		RetryPeriod:       o.retryPeriod,
		InitCallback: func() {
			klog.Infof("Starting informer resync")
			if err := reflectionManager.Resync(); err != nil {
				klog.Errorf("Error during resync: %s", err)
			}
		},
	}, localConfig, eb)
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	klog.Infof("hub-reflector: Liqo's EndpointSlice reflection from %s to %s (tenant namespace %s)", o.localCluster, o.remoteCluster, o.tenantNamespace)
	leaderelection.Run(ctx, elector)
	return nil
}
