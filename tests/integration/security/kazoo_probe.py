"""An independent ZooKeeper client (kazoo) for the ACL tests.

usage: kazoo_probe.py HOSTS AUTH OP:PATH...
AUTH is "user:password" (digest), "@FILE" for the "user:password" on the
first line of FILE (the zk-auth-file `tempest dev` prints), or "-" for none. OP is get, set, create
(a child named "forged"), children, delete, readonly (the node's ACL becomes
read for everyone, read and admin for AUTH's identity) or restore (ACL back to all permissions for AUTH's digest
identity), or one of the attacker's moves, each making missing parents with
an open ACL first: mkopen (the node itself open to everyone), mknoadmin
(everything but ADMIN for everyone), mkreadonly (read for everyone only) and
plant (an open storm-kafka offset node at offset 0). acl prints the node's
ACL as RESULT ("scheme:id:perms,..."). Prints one line per probe: "OP PATH RESULT", RESULT being "ok" or
the name of the kazoo exception (NoAuthError, NoNodeError, ...).
"""
import sys

from kazoo.client import KazooClient
from kazoo.security import OPEN_ACL_UNSAFE, make_acl, make_digest_acl

PLANTED_OFFSET = (b'{"topology":{"id":"forged","name":"forged"},"offset":0,"partition":0,'
                  b'"broker":{"host":"forged","port":9092},"topic":"forged"}')


def make(zk, path, acl, data=b""):
    parent = path.rsplit("/", 1)[0]
    if parent:
        zk.ensure_path(parent, acl=OPEN_ACL_UNSAFE)
    zk.create(path, data, acl=acl)


def probe(zk, op, path, auth):
    if op == "get":
        zk.get(path)
    elif op == "set":
        zk.set(path, b"forged")
    elif op == "create":
        zk.create(path.rstrip("/") + "/forged", b"forged")
    elif op == "children":
        zk.get_children(path)
    elif op == "delete":
        zk.delete(path)
    elif op == "readonly":
        # Like an operator freezing a node: everyone reads, AUTH's identity
        # may still change the ACL back, nobody writes.
        user, password = auth.split(":", 1)
        zk.set_acls(path, [make_acl("world", "anyone", read=True),
                           make_digest_acl(user, password, read=True, admin=True)])
    elif op == "mkopen":
        make(zk, path, OPEN_ACL_UNSAFE)
    elif op == "mknoadmin":
        make(zk, path, [make_acl("world", "anyone", read=True, write=True, create=True,
                                 delete=True)])
    elif op == "mkreadonly":
        make(zk, path, [make_acl("world", "anyone", read=True)])
    elif op == "plant":
        make(zk, path, OPEN_ACL_UNSAFE, PLANTED_OFFSET)
    elif op == "acl":
        acls, _ = zk.get_acls(path)
        return ",".join("%s:%s:%d" % (a.id.scheme, a.id.id, a.perms) for a in acls)
    elif op == "restore":
        user, password = auth.split(":", 1)
        zk.set_acls(path, [make_digest_acl(user, password, all=True)])
    else:
        raise ValueError(op)


def main():
    hosts, auth = sys.argv[1], sys.argv[2]
    if auth.startswith("@"):
        with open(auth[1:]) as f:
            auth = f.readline().strip()
    auth_data = [] if auth == "-" else [("digest", auth)]
    zk = KazooClient(hosts=hosts, timeout=10, auth_data=auth_data)
    zk.start(timeout=20)
    try:
        for spec in sys.argv[3:]:
            op, path = spec.split(":", 1)
            try:
                result = probe(zk, op, path, auth)
                print(op, path, result or "ok", flush=True)
            except Exception as e:  # the exception's name is the result
                print(op, path, type(e).__name__, flush=True)
    finally:
        zk.stop()
        zk.close()


if __name__ == "__main__":
    main()
