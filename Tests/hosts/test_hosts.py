"""One PostgreSQL store, several hosts: each host is a network namespace with
an address of its own (Tests/hosts/hosts.py), and what runs there is
host_peer (Tests/c/programs), a C program linked against liboutlive.so."""
import uuid


def test_a_signal_posted_on_one_host_reaches_a_consumer_whose_process_started_later_on_another(
        server, store_name, peer, two_hosts):
    a, b = two_hosts
    signal = str(uuid.uuid4())
    status, output = a.run([peer, a.uri(server, store_name), "registrar", "consume", signal, "until", "any_process"])
    assert status == 0 and "CONSUMING" in output, output
    status, output = a.run([peer, a.uri(server, store_name), "poster", "post", signal])
    assert status == 0 and "POSTED" in output, output
    # Nothing on host b existed when the signal was posted.
    deliverer = b.start([peer, b.uri(server, store_name), "deliverer", "deliver"])
    deliverer.expect(rf"^DELIVERED {signal} 1 {deliverer.pid}$", timeout=30)
    # And while it runs, a post on host a wakes it (the store's NOTIFY, across hosts).
    status, output = a.run([peer, a.uri(server, store_name), "poster", "post", signal])
    assert status == 0, output
    deliverer.expect(rf"^DELIVERED {signal} 2 {deliverer.pid}$", timeout=30)
    assert deliverer.finish() == 0
    assert [line for line in deliverer.lines if line.startswith("DELIVERED")] == \
        [f"DELIVERED {signal} 1 {deliverer.pid}", f"DELIVERED {signal} 2 {deliverer.pid}"]


def test_a_key_value_observer_on_one_host_sees_a_set_made_on_another(server, store_name, peer, two_hosts):
    a, b = two_hosts
    observer = a.start([peer, a.uri(server, store_name), "observer", "observe", "shared/"])
    observer.expect("^READY$", timeout=30)
    status, output = b.run([peer, b.uri(server, store_name), "setter", "set", "shared/greeting", "hello-from-b"])
    assert status == 0 and "SET" in output, output
    observer.expect("^OBSERVED shared/greeting hello-from-b$", timeout=30)
    status, output = b.run([peer, b.uri(server, store_name), "setter", "set", "other/key", "not-observed"])
    assert status == 0, output
    status, output = b.run([peer, b.uri(server, store_name), "setter", "set", "shared/greeting", "again"])
    assert status == 0, output
    observer.expect("^OBSERVED shared/greeting again$", timeout=30)
    assert observer.finish() == 0
    assert not any("other/key" in line for line in observer.lines)
