// Opening a WebSocket as a carrier or a browser opens the gateway's media sockets (Twilio's and
// Telnyx's media streams, the web-call page): the open socket, or the HTTP status the gateway refused
// the upgrade with. Once open, a later socket error is left to the `close` the callers wait on.
import WebSocket, { type ClientOptions } from 'ws';

export function openSocket(url: string, protocols: string[], options: ClientOptions = {}): Promise<WebSocket | { refused: number }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, protocols, options);
    socket.once('unexpected-response', (_req, res) => {
      resolve({ refused: res.statusCode ?? 0 });
      socket.terminate();
    });
    socket.once('error', reject);
    socket.once('open', () => {
      socket.removeAllListeners('error');
      socket.on('error', () => undefined);
      resolve(socket);
    });
  });
}
