import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Logger } from 'pino'

/** The server every process serves on (build-server.ts builds it): Fastify with Keygate's logger and TypeBox types. */
export type KeygateServer = FastifyInstance<Server, IncomingMessage, ServerResponse, Logger, TypeBoxTypeProvider>
