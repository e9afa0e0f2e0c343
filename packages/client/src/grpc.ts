/** The Node-only entry: the gRPC transport (node:http2), apart so browser bundles never see it. */
export { type GrpcTransportOptions, grpcTransport } from './transports/grpc.ts';
