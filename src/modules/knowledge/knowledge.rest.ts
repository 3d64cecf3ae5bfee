import { KnowledgeBase } from './knowledge-base.entity.js';
import { PageArgs } from '../../common/pagination.js';
import { routesUsing } from '../../rest/routes.js';
import { arrayOf, objectOf, ref, refWithout } from '../../rest/json-schema.js';
import { AddDocumentInput, CreateKnowledgeBaseInput, DocumentListArgs } from './knowledge.inputs.js';
import type { KnowledgeService } from './knowledge.service.js';

/** The services this route table calls. */
export type RouteServices = { knowledge: KnowledgeService };
const defineRoute = routesUsing<RouteServices>();

const TAG = 'Knowledge Bases';

/** Knowledge bases and their documents; interface endpoints 11 and 12 among them. */
export const knowledgeRoutes = [
  defineRoute({
    method: 'post',
    path: '/knowledge-bases',
    operationId: 'createKnowledgeBase',
    summary: 'Create a knowledge base',
    tag: TAG,
    body: CreateKnowledgeBaseInput,
    status: 201,
    response: ref('KnowledgeBase'),
    async handler({ actor, body, services, presenter }) {
      return presenter.present('KnowledgeBase', await services.knowledge.createBase(actor, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/knowledge-bases',
    operationId: 'listKnowledgeBases',
    summary: "A page of the organization's knowledge bases: {data, meta}; search matches name or description",
    tag: TAG,
    query: PageArgs,
    response: ref('KnowledgeBasePage'),
    async handler({ actor, query, services, presenter }) {
      return presenter.listAnswer('KnowledgeBasePage', KnowledgeBase, {
        json: (row) => services.knowledge.listBasesJson(actor, query, row),
        rows: () => services.knowledge.listBases(actor, query),
      });
    },
  }),
  defineRoute({
    method: 'get',
    path: '/knowledge-bases/{id}',
    operationId: 'getKnowledgeBase',
    summary: 'Read a knowledge base',
    tag: TAG,
    response: ref('KnowledgeBase'),
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('KnowledgeBase', await services.knowledge.getBase(actor, params.id!));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/knowledge-bases/{id}',
    operationId: 'deleteKnowledgeBase',
    summary: 'Delete a knowledge base with all its documents and chunks',
    tag: TAG,
    status: 204,
    errors: [404],
    async handler({ actor, params, services }) {
      await services.knowledge.deleteBase(actor, params.id!);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/knowledge-bases/{knowledgeBaseId}/documents',
    operationId: 'addDocument',
    summary: 'Add a document; it is chunked for retrieval before the answer',
    tag: TAG,
    body: AddDocumentInput,
    status: 201,
    response: ref('KnowledgeDocument'),
    errors: [404, 409, 413],
    async handler({ actor, params, body, services, presenter }) {
      return presenter.present('KnowledgeDocument', await services.knowledge.addDocument(actor, params.knowledgeBaseId!, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/knowledge-bases/{knowledgeBaseId}/documents',
    operationId: 'listDocuments',
    summary: "A page of a knowledge base's documents, newest first, without their content",
    tag: TAG,
    query: DocumentListArgs,
    response: objectOf({ data: arrayOf(refWithout('KnowledgeDocument', ['content'])), meta: ref('PageMeta') }),
    errors: [404],
    async handler({ actor, params, query, services, presenter }) {
      const page = await services.knowledge.listDocuments(actor, params.knowledgeBaseId!, query);
      return {
        data: page.data.map((document) => {
          const { content: _content, ...summary } = presenter.present('KnowledgeDocument', document) as Record<string, unknown>;
          return summary;
        }),
        meta: page.meta,
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/knowledge-bases/{knowledgeBaseId}/documents/{documentId}',
    operationId: 'getDocument',
    summary: 'Read a document with its content',
    tag: TAG,
    response: ref('KnowledgeDocument'),
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('KnowledgeDocument', await services.knowledge.getDocument(actor, params.knowledgeBaseId!, params.documentId!));
    },
  }),
];
