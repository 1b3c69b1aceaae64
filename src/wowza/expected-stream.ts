/** One stream a server must always have live: `application/stream`, or `application/instance/stream`. */
export interface ExpectedStream {
  application: string;
  appInstance: string;
  stream: string;
}
