# An othello-board client with the commonest student bug (issue 37): on its
# first turn it sends PUT 0 0 (a1, which flips nothing), reads the server's
# ERROR 2, and waits for a TURN that never comes, as the classroom
# OthelloClient.java does when its best square is refused.
import socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
f = s.makefile('r')
me = None
for line in f:
    w = line.split()
    if not w:
        continue
    if w[0] == 'START':
        me = w[1]
    elif w[0] == 'TURN' and w[1] == me:
        s.sendall(b'PUT 0 0\n')
    elif w[0] == 'ERROR':
        print('refused:', line.strip(), flush=True)
        time.sleep(60)
