package io.lvmqos.identity;

import com.google.protobuf.BoolValue;
import csi.v1.Csi;
import csi.v1.IdentityGrpc;
import io.grpc.stub.StreamObserver;

/** CSI Identity: who we are, what we offer, and whether we are ready. */
public final class IdentityService extends IdentityGrpc.IdentityImplBase {

    private final String driverName;
    private final String version;
    private final HealthCheck health;

    public IdentityService(String driverName, String version, HealthCheck health) {
        this.driverName = driverName;
        this.version = version;
        this.health = health;
    }

    @Override
    public void getPluginInfo(Csi.GetPluginInfoRequest request, StreamObserver<Csi.GetPluginInfoResponse> reply) {
        reply.onNext(Csi.GetPluginInfoResponse.newBuilder().setName(driverName).setVendorVersion(version).build());
        reply.onCompleted();
    }

    @Override
    public void getPluginCapabilities(Csi.GetPluginCapabilitiesRequest request,
                                      StreamObserver<Csi.GetPluginCapabilitiesResponse> reply) {
        reply.onNext(Csi.GetPluginCapabilitiesResponse.newBuilder()
                .addCapabilities(service(Csi.PluginCapability.Service.Type.CONTROLLER_SERVICE))
                .addCapabilities(service(Csi.PluginCapability.Service.Type.VOLUME_ACCESSIBILITY_CONSTRAINTS))
                .addCapabilities(service(Csi.PluginCapability.Service.Type.SNAPSHOT_METADATA_SERVICE))
                .addCapabilities(service(Csi.PluginCapability.Service.Type.GROUP_CONTROLLER_SERVICE))
                .addCapabilities(Csi.PluginCapability.newBuilder().setVolumeExpansion(
                        Csi.PluginCapability.VolumeExpansion.newBuilder()
                                .setType(Csi.PluginCapability.VolumeExpansion.Type.ONLINE)))
                .build());
        reply.onCompleted();
    }

    @Override
    public void probe(Csi.ProbeRequest request, StreamObserver<Csi.ProbeResponse> reply) {
        reply.onNext(Csi.ProbeResponse.newBuilder()
                .setReady(BoolValue.of(health.verdict().ready()))
                .build());
        reply.onCompleted();
    }

    private static Csi.PluginCapability service(Csi.PluginCapability.Service.Type type) {
        return Csi.PluginCapability.newBuilder()
                .setService(Csi.PluginCapability.Service.newBuilder().setType(type))
                .build();
    }
}
