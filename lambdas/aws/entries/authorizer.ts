import { lazyAuthorizer } from "../authorizer";

export const handler = lazyAuthorizer();
