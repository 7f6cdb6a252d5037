/**
 * The real-kernel test bed: user-mode-Linux guests with device-mapper, LVM and cgroups, for tests that
 * this machine's own kernel cannot run (it has no device-mapper and no cgroup v2 io controller). The
 * second kind of guest, Debian's stock kernel under qemu ({@code io.lvmqos.e2e.qemu.QemuGuest}, for
 * what UML's kernel lacks: io.cost, PSI), shares the init script, {@link io.lvmqos.e2e.uml.GuestEnv},
 * {@link io.lvmqos.e2e.uml.GuestRun} and {@link io.lvmqos.e2e.uml.GuestJUnit} with it: both builders
 * are a {@link io.lvmqos.e2e.uml.GuestSpec}, so one guest-side check runs in either.
 *
 * <h2>Running something in a guest</h2>
 * {@link io.lvmqos.e2e.uml.UmlGuest} boots one guest per {@code run()}: sparse disks, volume groups, an
 * optional thin pool, cgroup v2 (or v1 blkio), then a payload command line; it returns a
 * {@link io.lvmqos.e2e.uml.GuestRun} or throws a {@link io.lvmqos.e2e.uml.UmlGuestException} whose
 * {@code failure()} says what broke (boot, modules, volume group, cgroup, setup, timeout, crash).
 * Each run has its own directory under the system property {@code lvmqos.runDir} (default
 * {@code target/uml-runs}) holding console.log, params.sh and out/ (payload.log, exit-code, reports);
 * {@code -Dlvmqos.uml.echo=true} copies the console to standard output as it runs.
 *
 * <h2>Writing a guest-side check</h2>
 * <ol>
 * <li>A public JUnit class in {@code io.lvmqos.e2e.guest} named {@code *Check} (never {@code *Test} or
 *     {@code *IT}: those would also run on the host).</li>
 * <li>{@code @BeforeAll static void onlyInTheGuest() { GuestEnv.assumeInGuest(); }}</li>
 * <li>Learn about the guest from {@link io.lvmqos.e2e.uml.GuestEnv} (volume group, thin pool, cgroup
 *     root, disks, output directory, driver jar), run real commands with
 *     {@link io.lvmqos.e2e.uml.GuestCommand}, and remove what the check created.</li>
 * <li>From a host {@code *IT}: {@code @TestFactory Stream<DynamicTest> x() { return
 *     GuestJUnit.dynamicTests(UmlGuest.builder().disk("4G").volumeGroup("lvmqos", 0), MyCheck.class); }}
 *     One guest boots for all the classes given; each guest test becomes one host test.</li>
 * </ol>
 *
 * <p>The kernel: {@code LVMQOS_UML} and {@code LVMQOS_UML_MODULES}, which {@code scripts/lib.sh}'s
 * {@code lvmqos_pick_uml} sets to a kernel that a probe boot proved on this host (./run-tests does);
 * without them, {@code linux.uml} on PATH. {@code Builder.kernel(...)} overrides both for one guest.
 *
 * <p>Host prerequisites: root, and the packages user-mode-linux, kmod, lvm2 and thin-provisioning-tools;
 * uml-utilities (uml_mconsole), if present, lets a timed-out guest dump its tasks before it is killed.
 * {@code LVMQOS_SKIP_UML=1} skips every UML guest test explicitly, {@code LVMQOS_SKIP_QEMU=1} every qemu one.
 */
package io.lvmqos.e2e.uml;
