/**
 * The local cluster's addresses. The node runs in a network namespace of its own, so every
 * cluster on a machine can use the same ones: none of them exists outside that namespace.
 */

/** Services' ClusterIPs (kube-apiserver --service-cluster-ip-range, kube-proxy). */
export const SERVICE_CIDR = '10.0.0.0/24';
/** The `kubernetes` Service: the first address of SERVICE_CIDR. */
export const KUBERNETES_SERVICE_IP = '10.0.0.1';
/** Pods' addresses (the CNI bridge's host-local range; kube-proxy's clusterCIDR). */
export const POD_CIDR = '10.88.0.0/16';
/**
 * The node's own address inside its namespace: the kubelet's InternalIP and the API server's
 * advertised address, which the `kubernetes` Service's endpoints point at. A forwarder in the
 * node's namespace listens there and carries connections to the API server on the host's loopback.
 */
export const NODE_IP = '10.87.0.1';
/**
 * The node's name and Hostname address. The API server reaches a kubelet by that address; a
 * forwarder on the host's 127.0.0.1 carries it into the node's namespace (as hack/local-up-cluster.sh
 * names its node 127.0.0.1).
 */
export const NODE_NAME = '127.0.0.1';

/**
 * Namespace annotations that keep a namespace's pods off the node (PodNodeSelector admission adds
 * a node selector that no node matches): its Jobs get pods that stay Pending, as on a control
 * plane without a node. For tests and benchmarks about the operator's API traffic, where
 * thousands of pods running would measure the node instead.
 */
export const NO_PODS_ANNOTATIONS: Readonly<Record<string, string>> = {
  'scheduler.alpha.kubernetes.io/node-selector': 'echoperator.dev/no-pods=true',
};
