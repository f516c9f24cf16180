// Liqo's leaf writer for the end-to-end tests: Liqo v1.2.0's own shadowendpointslice-controller (the code that turns
// the ShadowEndpointSlices a hub's virtual kubelet writes into the leaf's EndpointSlices), run in a controller-runtime
// manager as liqo-controller-manager runs it (cmd/liqo-controller-manager/modules/offloading.go), against the API
// server of a kubeconfig. Nothing of it is reimplemented here: the tests see exactly the writes Liqo makes.
//
//	liqo-writer --kubeconfig FILE [--workers N] [-v 4]
package main

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	liqov1beta1 "github.com/liqotech/liqo/apis/core/v1beta1"
	ipamv1alpha1 "github.com/liqotech/liqo/apis/ipam/v1alpha1"
	networkingv1beta1 "github.com/liqotech/liqo/apis/networking/v1beta1"
	offloadingv1beta1 "github.com/liqotech/liqo/apis/offloading/v1beta1"
	shadowepsctrl "github.com/liqotech/liqo/pkg/liqo-controller-manager/offloading/shadowendpointslice-controller"
)

func main() {
	// --kubeconfig is controller-runtime's own flag (pkg/client/config), read by ctrl.GetConfig.
	// Liqo's default (--shadow-endpointslice-ctrl-workers, pkg/liqo-controller-manager/flags.go).
	workers := flag.Int("workers", 10, "concurrent reconciles")
	klog.InitFlags(flag.CommandLine)
	flag.Parse()
	if err := run(*workers); err != nil {
		fmt.Fprintf(os.Stderr, "liqo-writer: %v\n", err)
		os.Exit(1)
	}
}

func run(workers int) error {
	log.SetLogger(klog.NewKlogr())
	config, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("no kubeconfig: %w", err)
	}
	// The scheme of liqo-controller-manager (cmd/liqo-controller-manager/main.go), less the kinds this controller
	// never reads (monitoring, authentication).
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, liqov1beta1.AddToScheme,
		offloadingv1beta1.AddToScheme, ipamv1alpha1.AddToScheme, networkingv1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	ctx := ctrl.SetupSignalHandler()
	// No metrics or health endpoints and no leader election: one writer per leaf, on loopback ports nobody reads.
	mgr, err := ctrl.NewManager(config, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		return fmt.Errorf("manager creation failed: %w", err)
	}
	reconciler := &shadowepsctrl.Reconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme()}
	if err := reconciler.SetupWithManager(ctx, mgr, workers); err != nil {
		return fmt.Errorf("setting up the shadowendpointslice controller: %w", err)
	}
	klog.Info("liqo-writer: starting Liqo v1.2.0's shadowendpointslice-controller")
	return mgr.Start(ctx)
}
