package io.lvmqos.e2e;

import io.grpc.ManagedChannel;
import io.lvmqos.e2e.pluginregistration.PluginRegistration;
import io.lvmqos.e2e.pluginregistration.RegistrationGrpc;
import io.netty.channel.EventLoopGroup;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * kubelet's plugin watcher's side of a registration socket (pluginregistration v1), as
 * pkg/kubelet/pluginmanager/operationexecutor/operation_generator.go calls it: GetInfo, then
 * NotifyRegistrationStatus with kubelet's verdict.
 */
public record RegistrationClient(ManagedChannel channel, EventLoopGroup group) implements AutoCloseable {

    /**
     * kubelet dials for up to 10 s and then gives GetInfo 1 s; a Java channel connects on its first
     * call, so that call gets both.
     */
    public static final Duration GET_INFO_DEADLINE = Duration.ofSeconds(11);
    /** kubelet's notifyTimeoutDuration. */
    public static final Duration NOTIFY_DEADLINE = Duration.ofSeconds(5);

    public static RegistrationClient connect(Path registrationSocket) {
        EventLoopGroup group = CsiClient.newEventLoopGroup();
        return new RegistrationClient(CsiClient.unixChannel(registrationSocket, group), group);
    }

    public PluginRegistration.PluginInfo getInfo() {
        return RegistrationGrpc.newBlockingStub(channel)
                .withDeadlineAfter(GET_INFO_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
                .getInfo(PluginRegistration.InfoRequest.getDefaultInstance());
    }

    /** kubelet's verdict: registered, or not with its reason. */
    public PluginRegistration.RegistrationStatusResponse notifyRegistrationStatus(boolean registered, String error) {
        return RegistrationGrpc.newBlockingStub(channel)
                .withDeadlineAfter(NOTIFY_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
                .notifyRegistrationStatus(PluginRegistration.RegistrationStatus.newBuilder()
                        .setPluginRegistered(registered).setError(error).build());
    }

    @Override
    public void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
}
