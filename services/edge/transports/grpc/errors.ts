/**
 * Errors of the gRPC transport and the one place where errors become gRPC statuses (docs/conventions.md §6).
 * Handlers throw; `toStatus` decides code and details. Details reuse the REST texts of docs/contract.md
 * ("Invalid game slug", "Game not found") so every protocol names bad input alike.
 */
import { type StatusObject, status } from '@grpc/grpc-js';
import { isConnectionError } from '../../../../lib/db/pool.ts';
import { AppError } from '../../../../lib/errors.ts';

/** Codes of {@link RpcError}: `GRPC_` and the name of its gRPC status (GRPC_INVALID_ARGUMENT, …). */
export type RpcErrorCode = `GRPC_${keyof typeof status}`;

/** An expected rejection carrying its gRPC status code (INVALID_ARGUMENT, NOT_FOUND, …). */
export class RpcError extends AppError {
  declare readonly code: RpcErrorCode;

  constructor(
    readonly grpcCode: status,
    message: string,
  ) {
    super(`GRPC_${status[grpcCode] as keyof typeof status}`, message);
  }
}

export const invalidArgument = (message: string): RpcError => new RpcError(status.INVALID_ARGUMENT, message);
export const notFound = (message: string): RpcError => new RpcError(status.NOT_FOUND, message);

/**
 * The status a failed call ends with: an `RpcError`'s own code; UNAVAILABLE for an unreachable
 * database (the client may retry, as REST answers 503); INTERNAL with a fixed text otherwise, so
 * no internal detail leaks to clients.
 */
export function toStatus(err: unknown): Pick<StatusObject, 'code' | 'details'> {
  if (err instanceof RpcError) return { code: err.grpcCode, details: err.message };
  if (isConnectionError(err)) return { code: status.UNAVAILABLE, details: 'Service Unavailable' };
  return { code: status.INTERNAL, details: 'Internal Server Error' };
}
